// Validates .glb files with the Khronos glTF validator (npm gltf-validator); exit 1 on any error.
const fs = require('fs');
const validator = require('gltf-validator');
(async () => {
  let bad = 0;
  for (const f of process.argv.slice(2)) {
    const r = await validator.validateBytes(new Uint8Array(fs.readFileSync(f)), {maxIssues: 50});
    console.log(`${f}: ${r.issues.numErrors} errors, ${r.issues.numWarnings} warnings, ${r.issues.numInfos} infos`);
    for (const m of r.issues.messages.slice(0, 10)) console.log(`  ${m.severity} ${m.code} ${m.pointer || ''} ${m.message}`);
    if (r.issues.numErrors > 0) bad++;
  }
  process.exit(bad ? 1 : 0);
})();
