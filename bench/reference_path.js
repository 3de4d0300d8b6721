// The reference's node path, as a peer in scripts/bench.sh (issue 19): what a
// nubos-pilot workflow pays per container spawn without np-exec. node starts
// (`node .nubos-pilot/bin/np-tools.cjs isolation wrap ...`), probes the engine
// with `docker version` the way the reference's isolation.cjs does, and the
// printed `docker run` argv then runs. Here the argv is given on the command
// line (np-exec's own, from `np-exec wrap`), so both paths start the same
// container; what differs is everything around it.
//
//   node bench/reference_path.js DOCKER run ARGS...
'use strict';
const { spawnSync } = require('node:child_process');
const { constants } = require('node:os');

const [docker, ...runArgs] = process.argv.slice(2);
if (!docker || runArgs[0] !== 'run') {
  process.stderr.write('usage: node reference_path.js DOCKER run ARGS...\n');
  process.exit(2);
}
const probe = spawnSync(docker, ['version', '--format', '{{.Server.Version}}'], {
  encoding: 'utf8',
  timeout: 10000,
});
if (probe.status !== 0 || !probe.stdout.trim()) {
  process.stderr.write('reference path: the engine is unavailable\n');
  process.exit(69);
}
const run = spawnSync(docker, runArgs, { stdio: 'inherit' });
process.exit(run.signal ? 128 + constants.signals[run.signal] : run.status);
