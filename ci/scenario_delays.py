"""The adversary of a free-running pool, in model time: copies of a scenario
with one thread or callback held back at one operation boundary.

On the real pool nothing orders two threads but what they wait for: Windows
promises no start order, `Sleep` is a lower bound, and a ready thread may sit
unscheduled for as long as a loaded machine likes (under Wine on 2 cores at
load 5+, thread A's `arm X` ran after thread R's `sleep 5ms; release G`).  A
scenario the real pool runs must keep its verdict however late any one thread
or callback reaches any one of its operations.  Each copy made here inserts
`sleep DELAY` at one such point -- before an operation of a thread, callback
or repeat body, or before the `end` of a thread or callback (a late return),
or as the whole body of a callback block added to an object that has none (a
late callback) -- or puts DELAY on the due time of one `arm T [after D]` or the
period of one `periodic R period D`, or of all of them at once (a timer the
pool fires late: Wine's timer queue under load) -- and the controlled scheduler runs it in virtual time, so the
check is deterministic: the same copies, seeds and build give the same runs.

DELAY is longer than every sleep and timed hold of the file (and at least
30 ms), so a delayed thread loses every race a sleep of the file was meant to
win for it.  One delay per copy: two threads held back at once
are the product of the single cases and cost their square; each single delay
already reverses any order a sleep imposed."""
import re

# The durations that order threads: sleeps and timed holds.  A timer's due
# time or period is not one (a due time of 10 s in
# stop-waits-for-periodic-start-in-progress exists never to come).
ORDERING = re.compile(r"^\s*(?:sleep|hold\b.*\bfor)\s+(\d+)(us|ms|s)\s*$", re.M)
UNIT_US = {"us": 1, "ms": 1000, "s": 1000000}
DUE = re.compile(r"(\s*(?:arm\s+\w+\s+after|periodic\s+\w+\s+period)\s+)(\d+)(us|ms|s)\b")
NOW = re.compile(r"(\s*arm\s+(\w+))(?!\s+after)(?=\s|$)")
CALLBACK_KINDS = ("work", "wait", "timer", "periodic", "io")


def code(line):
    return line.split("#", 1)[0].strip()


def delay_us(text):
    """Longer than every sleep and timed hold of the file, and at least 30 ms
    (a thread 15-20 ms late was measured under Wine at load 4)."""
    longest = max((int(n) * UNIT_US[u] for n, u in ORDERING.findall(
        "\n".join(code(l) for l in text.splitlines()))), default=0)
    return max(30000, longest + 10000)


def fmt(us):
    return f"{us // 1000}ms" if us % 1000 == 0 else f"{us}us"


def timer_late(raw, timers, delay):
    """`raw` with its timer's due time or period `delay` us later, or None."""
    line = raw.split("#", 1)[0]
    now = NOW.match(line)
    if now and now.group(2) in timers:
        return now.group(1) + f" after {fmt(delay)}" + line[now.end(1):]
    m = DUE.match(line)
    if m:
        return m.group(1) + fmt(int(m.group(2)) * UNIT_US[m.group(3)] + delay) + line[m.end(3):]
    return None


def delayed_copies(text):
    """[(label, text)]: one copy per point where a thread, callback or repeat
    body can be held back.  label names the block and the line the delay goes
    before ("thread A line 12", "callback X end", "callback W added")."""
    lines = text.splitlines()
    sleep = f"sleep {fmt(delay_us(text))}"
    points = []  # (index to insert before, label)
    stack = []   # open blocks: (kind, name)
    has_callback, objects = set(), []
    for i, raw in enumerate(lines):
        words = code(raw).split()
        if not words:
            continue
        w = words[0].replace("_", "-")
        if not stack:
            if w in ("thread", "callback") and len(words) >= 2:
                stack.append((w, words[1]))
                if w == "callback":
                    has_callback.add(words[1])
            elif w in CALLBACK_KINDS and len(words) >= 2:
                objects.append((words[1], w))
            continue
        if w == "end":
            kind, name = stack.pop()
            if kind != "repeat":
                points.append((i, f"{kind} {name} end"))
            continue
        kind, name = next(b for b in reversed(stack) if b[0] != "repeat")
        points.append((i, f"{kind} {name} line {i + 1}"))
        if w == "repeat":
            stack.append(("repeat", name))
    copies = []
    timers = {n for n, kind in objects if kind in ("timer", "periodic")}
    every = list(lines)
    for i, raw in enumerate(lines):
        late = timer_late(raw, timers, delay_us(text))
        if late is not None:
            every[i] = late
            copies.append((f"timer fires late line {i + 1}", "\n".join(lines[:i] + [late] + lines[i + 1:]) + "\n"))
    if every != lines:
        copies.append(("every timer fires late", "\n".join(every) + "\n"))
    for at, label in points:
        indent = re.match(r"\s*", lines[at]).group(0) or "  "
        copies.append((label, "\n".join(lines[:at] + [indent + sleep] + lines[at:]) + "\n"))
    for name, _ in objects:
        if name not in has_callback:
            copies.append((f"callback {name} added",
                           text.rstrip("\n") + f"\n\ncallback {name}\n  {sleep}\nend\n"))
    return copies
