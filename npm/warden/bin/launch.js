'use strict';
// Runs one of warden's binaries from the platform package npm installed
// beside this one (@warden-run/warden-OS-CPU), passing arguments, standard
// streams, signals and the exit status through.
const { spawnSync } = require('child_process');
const path = require('path');

module.exports = function launch(name) {
  const pkg = `@warden-run/warden-${process.platform}-${process.arch}`;
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch (err) {
    process.stderr.write(
      `warden: no prebuilt binary for ${process.platform} ${process.arch}: the package ${pkg} is not installed.\n` +
      'warden ships binaries for linux and darwin on x64 and arm64. If npm skipped optional dependencies ' +
      '(--omit=optional or --no-optional), install again without that flag. Elsewhere, build from source: ' +
      'go install github.com/warden-run/warden/cmd/warden@latest\n');
    process.exit(127);
  }
  const bin = path.join(dir, 'bin', name);
  const r = spawnSync(bin, process.argv.slice(2), { stdio: 'inherit' });
  if (r.error) {
    process.stderr.write(`warden: could not run ${bin}: ${r.error.message}\n`);
    process.exit(127);
  }
  if (r.signal) {
    process.kill(process.pid, r.signal);
  }
  process.exit(r.status === null ? 1 : r.status);
};
