/* The names the scenario language knows: trace points, operations, object
 * kinds, entry fields, faults.  One table each, shared by the parser, the
 * runner and `tpheal-harness list`, so a name is defined exactly once. */
#include <string.h>

#include "scn_ast.h"

typedef struct trace_point {
    const char *target;
    const char *name;
    bool has_pool; /* the record's first operand is the pool key */
} trace_point;

/* docs/architecture.md, "Trace events (stable names)". */
static const trace_point points[] = {
    {"heal", "registered", true},
    {"heal", "register-failed", true},
    {"heal", "entry-created", true},
    {"heal", "released", true},
    {"heal", "entry-retired", true},
    {"heal", "repair-submitted", true},
    {"heal", "repair-submitted-inline", true},
    {"heal", "submit-clock-read", true},
    {"heal", "repair-in-flight", true},
    {"heal", "repair-overdue", true},
    {"heal", "repair-started", true},
    {"heal", "repair-ran", true},
    {"heal", "repair-closed", true},
    {"heal", "healer-started", false},
    {"heal", "healer-start-failed", false},
    {"heal", "healer-tick", false},
    {"heal", "cancel-untracked", true},
    {"heal", "cancel-clock-read", true},
    {"heal", "cancelled", true},
    {"obligation", "drop-obligation-owed", false},
    {"obligation", "drain-owed", false},
    {"obligation", "fail-fast", false},
    /* target api: one per seam pool call, named after the Win32 call */
    {"api", "CreateThreadpool", false},
    {"api", "CloseThreadpool", false},
    {"api", "SetThreadpoolThreadMaximum", false},
    {"api", "SetThreadpoolThreadMinimum", false},
    {"api", "CreateThreadpoolCleanupGroup", false},
    {"api", "CloseThreadpoolCleanupGroupMembers", false},
    {"api", "CloseThreadpoolCleanupGroup", false},
    {"api", "CreateThreadpoolWork", false},
    {"api", "SubmitThreadpoolWork", false},
    {"api", "WaitForThreadpoolWorkCallbacks", false},
    {"api", "CloseThreadpoolWork", false},
    {"api", "CreateThreadpoolWait", false},
    {"api", "SetThreadpoolWait", false},
    {"api", "WaitForThreadpoolWaitCallbacks", false},
    {"api", "CloseThreadpoolWait", false},
    {"api", "CreateThreadpoolTimer", false},
    {"api", "SetThreadpoolTimer", false},
    {"api", "IsThreadpoolTimerSet", false},
    {"api", "WaitForThreadpoolTimerCallbacks", false},
    {"api", "CloseThreadpoolTimer", false},
    {"api", "CreateThreadpoolIo", false},
    {"api", "StartThreadpoolIo", false},
    {"api", "CancelThreadpoolIo", false},
    {"api", "WaitForThreadpoolIoCallbacks", false},
    {"api", "CloseThreadpoolIo", false},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

size_t scn_trace_point_count(void) { return COUNT(points); }

const char *scn_trace_point_name(int i) {
    return (i >= 0 && (size_t)i < COUNT(points)) ? points[i].name : "?";
}

const char *scn_trace_point_target(int i) {
    return (i >= 0 && (size_t)i < COUNT(points)) ? points[i].target : "?";
}

bool scn_trace_point_has_pool(int i) {
    return i >= 0 && (size_t)i < COUNT(points) && points[i].has_pool;
}

int scn_trace_point_find(const char *name) {
    size_t i;
    for (i = 0; i < COUNT(points); i++)
        if (strcmp(points[i].name, name) == 0) return (int)i;
    return -1;
}

static const char *const op_names[SCN_OP_KIND_COUNT] = {
    "create", "submit", "arm", "signal", "reset", "disarm", "try_cancel_pending",
    "cancel_untracked", "cancel_pending", "wait", "stop_and_drain", "close", "release",
    "complete", "io_cancel", "run_down", "tick", "retire_idle", "retire_workers", "sleep",
    "yield", "repeat", "assert", "await",
};

const char *scn_op_name(scn_op_kind k) {
    return ((unsigned)k < SCN_OP_KIND_COUNT) ? op_names[k] : "?";
}

static const char *const kind_names[SCN_OBJ_KIND_COUNT] = {
    "event", "work", "wait", "timer", "periodic", "io", "group",
};

const char *scn_obj_kind_name(scn_obj_kind k) {
    return ((unsigned)k < SCN_OBJ_KIND_COUNT) ? kind_names[k] : "?";
}

static const char *const field_names[SCN_FIELD_COUNT] = {
    "exists", "objects", "last_cancelled", "last_started", "last_submitted",
    "outstanding", "overdue_episodes", "repairs_run", "unhealed",
};

const char *scn_field_name(scn_field f) {
    return ((unsigned)f < SCN_FIELD_COUNT) ? field_names[f] : "?";
}

static const char *const fault_names[SCN_FAULT_KIND_COUNT] = {
    "work-create", "wait-create", "timer-create", "io-create", "group-create",
    "event-create", "pool-create", "healer-start", "alloc",
};

const char *scn_fault_name(scn_fault_kind k) {
    return ((unsigned)k < SCN_FAULT_KIND_COUNT) ? fault_names[k] : "?";
}

#define K(x) (1u << (x))
unsigned scn_op_operand_kinds(scn_op_kind k) {
    switch (k) {
    case SCN_OP_CREATE:
        return K(SCN_OBJ_EVENT) | K(SCN_OBJ_WORK) | K(SCN_OBJ_WAIT) | K(SCN_OBJ_TIMER) |
               K(SCN_OBJ_PERIODIC) | K(SCN_OBJ_IO) | K(SCN_OBJ_GROUP);
    case SCN_OP_SUBMIT: return K(SCN_OBJ_WORK);
    case SCN_OP_ARM: return K(SCN_OBJ_WAIT) | K(SCN_OBJ_TIMER) | K(SCN_OBJ_PERIODIC) | K(SCN_OBJ_IO);
    case SCN_OP_SIGNAL:
    case SCN_OP_RESET: return K(SCN_OBJ_EVENT);
    case SCN_OP_DISARM: return K(SCN_OBJ_WAIT) | K(SCN_OBJ_TIMER) | K(SCN_OBJ_PERIODIC);
    case SCN_OP_TRY_CANCEL:
    case SCN_OP_CANCEL_UNTRACKED: return K(SCN_OBJ_WAIT);
    case SCN_OP_CANCEL_PENDING: return K(SCN_OBJ_WORK) | K(SCN_OBJ_TIMER);
    case SCN_OP_WAIT:
    case SCN_OP_STOP_AND_DRAIN:
        return K(SCN_OBJ_WORK) | K(SCN_OBJ_WAIT) | K(SCN_OBJ_TIMER) | K(SCN_OBJ_PERIODIC);
    case SCN_OP_CLOSE:
        return K(SCN_OBJ_EVENT) | K(SCN_OBJ_WORK) | K(SCN_OBJ_WAIT) | K(SCN_OBJ_TIMER) |
               K(SCN_OBJ_PERIODIC) | K(SCN_OBJ_IO) | K(SCN_OBJ_GROUP);
    case SCN_OP_RELEASE: return K(SCN_OBJ_GROUP);
    case SCN_OP_COMPLETE:
    case SCN_OP_IO_CANCEL:
    case SCN_OP_RUN_DOWN: return K(SCN_OBJ_IO);
    default: return 0;
    }
}
