// `npm run bench [suite]`: each figure is printed beside a reference measured in the same run.
import { benchBlobTransfer } from './blob-transfer-bench.js';
import { benchControlPlane } from './control-plane-bench.js';
import { benchCacheKeys, benchCodeDigest, benchExample, benchSweep } from './engine-bench.js';
import { benchGitHub } from './github-bench.js';
import { benchHostile } from './hostile-bench.js';
import { benchPages } from './pages-bench.js';
import { benchSlurm } from './slurm-bench.js';

const only = process.argv[2];
const suites: Record<string, () => Promise<void>> = {
  example: benchExample,
  digest: benchCodeDigest,
  keys: benchCacheKeys,
  'control-plane': benchControlPlane,
  github: benchGitHub,
  hostile: benchHostile,
  pages: benchPages,
  slurm: benchSlurm,
  sweep: benchSweep,
  blobs: benchBlobTransfer,
};
console.log(`fluksio benchmarks · node ${process.version} · ${new Date().toISOString()}`);
for (const [name, suite] of Object.entries(suites)) {
  if (!only || only === name) await suite();
}
