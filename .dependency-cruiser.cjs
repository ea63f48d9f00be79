/**
 * The import rules of DESIGN §2: schemas/ is the leaf, store/ sees only schemas/,
 * present/ (how a run reads for people) sees only schemas/, runner/ and app/ never
 * import each other, cli/ and action/ wire everything.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A circular import is a bug (STYLE habit 2).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'schemas-is-the-leaf',
      severity: 'error',
      comment: 'schemas/ imports nothing of ours but schemas/, and does no I/O.',
      from: { path: '^schemas/' },
      to: { path: '^(store|runner|app|cli|action|present)/' },
    },
    {
      name: 'schemas-and-present-have-no-io',
      severity: 'error',
      from: { path: '^(schemas|present)/' },
      to: {
        dependencyTypes: ['core'],
        path: '^(fs|fs/promises|child_process|net|http|https|dgram|tls|worker_threads|os)$',
      },
    },
    {
      name: 'present-sees-only-schemas',
      severity: 'error',
      comment: 'present/ is pure presentation of runs: the app, the CLI and the action read it.',
      from: { path: '^present/' },
      to: { path: '^(store|runner|app|cli|action)/' },
    },
    {
      name: 'store-sees-only-schemas',
      severity: 'error',
      from: { path: '^store/' },
      to: { path: '^(runner|app|cli|action|present)/' },
    },
    {
      name: 'runner-never-imports-store-or-app',
      severity: 'error',
      comment: 'The engine talks to ports passed in (DESIGN §2).',
      from: { path: '^runner/' },
      to: { path: '^(store|app|cli|action|present)/' },
    },
    {
      name: 'app-never-imports-runner',
      severity: 'error',
      from: { path: '^app/' },
      to: { path: '^(runner|cli|action)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
