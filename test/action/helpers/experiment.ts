/** The repository's name in the GitHub double and in `GITHUB_REPOSITORY`. */
export const REPOSITORY = 'octo-org/ml-project';

/** The line of train.py that divides by zero when `fail=1`. */
export const FAILING_LINE = 9;

/**
 * A small experiment: `prepare` copies the data, `train` streams a loss and writes its
 * metrics (and divides by zero when `fail=1`), `probe` prints its environment and tries
 * to issue workflow commands of its own.
 */
export const EXPERIMENT_FILES: Record<string, string> = {
  '.gitignore': '/data/\n/model.txt\n/metrics.json\n/probe.txt\n',
  'fluksio.yml': `version: 1
params:
  lr: { type: float, default: 0.5, min: 0 }
  fail: { type: int, default: 0 }
metrics:
  loss: { goal: min }
stages:
  prepare:
    cmd: mkdir -p data && cp raw.csv data/clean.csv
    deps: [raw.csv]
    outs: [data/clean.csv]
    code: false
  train:
    cmd: python3 train.py \${lr} \${fail}
    deps: [train.py, data/clean.csv]
    params: [lr, fail]
    outs: [model.txt]
    metrics: [metrics.json]
  probe:
    cmd: env | sort && echo '::error::x' && echo '::set-output name=a::b' && echo '::warning file=train.py,line=1::look here' && echo probed > probe.txt
    outs: [probe.txt]
`,
  'raw.csv': '1\n2\n3\n',
  'train.py': `import json, sys
lr, fail = float(sys.argv[1]), int(sys.argv[2])
rows = [float(line) for line in open("data/clean.csv") if line.strip()]
loss = 1.0
for step in range(3):
    loss = loss * (1 - lr)
    print(f"::metric name=loss::{loss}", flush=True)
if fail:
    print(1 / 0)
open("model.txt", "w").write(f"lr={lr}\\n")
json.dump({"loss": loss, "rows": len(rows)}, open("metrics.json", "w"))
`,
};

/** The pull request's change: a better loss (squared decay). */
export const HEAD_FILES: Record<string, string> = {
  'train.py': (EXPERIMENT_FILES['train.py'] ?? '').replace('loss * (1 - lr)', 'loss * (1 - lr) ** 2'),
};
