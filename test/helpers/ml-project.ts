import { makeRepo, type TestRepo } from './make-repo.js';

/**
 * A small ML project in a fresh git repository, shaped for cache tests: `prepare`
 * (code: false) makes data from raw.csv and a seed; `train` imports helpers.py and
 * shared.py, neither of them its dep; `evaluate` lists shared.py as a dep. The
 * fingerprint reads `.toolchain`, a git-ignored file, and the pipeline passes DEVICE.
 */
export const ML_FILES: Record<string, string> = {
  '.gitignore': '/data/\n/model.txt\n/metrics/\n.toolchain\n',
  '.toolchain': 'python 3.11\n',
  'fluksio.yml': `version: 1
params:
  lr: { type: float, default: 0.01, min: 0 }
  epochs: { type: int, default: 2, min: 1 }
  seed: { type: int, default: 0 }
  note: { type: string, default: "" }
env: [DEVICE]
fingerprint: cat .toolchain
metrics:
  loss: { goal: min }
  accuracy: { goal: max }
stages:
  prepare:
    cmd: python3 prepare.py \${seed}
    deps: [prepare.py, raw.csv]
    params: [seed]
    outs: [data/clean.csv]
    code: false
  train:
    cmd: python3 train.py \${lr} \${epochs}
    deps: [train.py, data/clean.csv]
    params: [lr, epochs]
    outs: [model.txt]
    metrics: [metrics/train.json]
  evaluate:
    cmd: python3 evaluate.py
    deps: [evaluate.py, model.txt, shared.py]
    metrics: [metrics/eval.json]
`,
  'raw.csv': '1\n2\n3\n4\n',
  'prepare.py': `import os, sys
seed = int(sys.argv[1])
rows = [int(line) for line in open("raw.csv") if line.strip()]
os.makedirs("data", exist_ok=True)
with open("data/clean.csv", "w") as f:
    f.write("\\n".join(str(r * 10 + seed) for r in rows) + "\\n")
print("prepared", len(rows), "rows")
`,
  'helpers.py': `def scale(x):
    return x / 100.0
`,
  'shared.py': `OFFSET = 1.0
`,
  'train.py': `import json, os, sys
from helpers import scale
from shared import OFFSET
lr, epochs = float(sys.argv[1]), int(sys.argv[2])
data = [float(line) for line in open("data/clean.csv") if line.strip()]
loss = 1.0
for epoch in range(epochs):
    loss = loss * (1 - lr) + scale(sum(data)) * 0.0 + OFFSET * 0.0
    print(f"::metric name=loss::{loss}", flush=True)
with open("model.txt", "w") as f:
    f.write(f"lr={lr} loss={loss}\\n")
os.makedirs("metrics", exist_ok=True)
json.dump({"loss": loss}, open("metrics/train.json", "w"))
`,
  'evaluate.py': `import json, os
from shared import OFFSET
text = open("model.txt").read()
loss = float(text.split("loss=")[1])
os.makedirs("metrics", exist_ok=True)
json.dump({"accuracy": round(1 - loss / 2, 6), "nested": {"f1": 0.5}}, open("metrics/eval.json", "w"))
`,
};

/** The project in a new repository, committed. */
export function makeMlProject(overrides: Record<string, string> = {}): Promise<TestRepo> {
  return makeRepo({ files: { ...ML_FILES, ...overrides } });
}
