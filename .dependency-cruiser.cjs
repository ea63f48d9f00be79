/**
 * The import rules of the README's code map (DESIGN §2): schemas/ is the leaf, core/ sees
 * only schemas/, store/ sees schemas/ and core/, runner/ and app/ never import each other,
 * cli/ and action/ are composition roots that wire the others and never import each other.
 */

/** Node's modules that reach outside the process: what "no I/O" forbids. */
const IO_MODULES =
  '^(node:)?(fs|fs/promises|child_process|net|http|https|http2|dgram|tls|worker_threads|os|dns)$';

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
      to: { path: '^(core|store|runner|app|cli|action)/' },
    },
    {
      name: 'core-sees-only-schemas',
      severity: 'error',
      comment: 'core/ is the pure logic every side shares: it imports schemas/ and itself only.',
      from: { path: '^core/' },
      to: { path: '^(store|runner|app|cli|action)/' },
    },
    {
      name: 'schemas-and-core-do-no-io',
      severity: 'error',
      from: { path: '^(schemas|core)/' },
      to: { dependencyTypes: ['core'], path: IO_MODULES },
    },
    {
      name: 'store-sees-only-schemas-and-core',
      severity: 'error',
      from: { path: '^store/' },
      to: { path: '^(runner|app|cli|action)/' },
    },
    {
      name: 'store-db-is-plumbing',
      severity: 'error',
      comment: 'store/db/ opens, migrates and helps query the database; the aggregates build on it.',
      from: { path: '^store/db/' },
      to: { path: '^store/(?!db/)' },
    },
    {
      name: 'runner-never-imports-store-or-app',
      severity: 'error',
      comment: 'The engine talks to ports passed in (DESIGN §2).',
      from: { path: '^runner/' },
      to: { path: '^(store|app|cli|action)/' },
    },
    {
      name: 'runner-engine-never-imports-the-daemon',
      severity: 'error',
      comment: 'The daemon drives the engine; the engine runs without it (fluksio run, the action).',
      from: { path: '^runner/(?!daemon/)' },
      to: { path: '^runner/daemon/' },
    },
    {
      name: 'app-never-imports-runner',
      severity: 'error',
      from: { path: '^app/' },
      to: { path: '^(runner|cli|action)/' },
    },
    {
      name: 'github-render-is-pure',
      severity: 'error',
      comment: 'Rendering a check run or a comment is a pure function (STYLE habit 8): no store, no I/O.',
      from: { path: '^app/github/render/' },
      to: { path: '^(store|app/(?!github/render/))' },
    },
    {
      name: 'github-render-does-no-io',
      severity: 'error',
      from: { path: '^app/github/render/' },
      to: { dependencyTypes: ['core'], path: IO_MODULES },
    },
    {
      name: 'github-intake-is-not-imported-by-the-rest',
      severity: 'error',
      comment:
        'Intake receives deliveries and dispatches them to triggers; nothing it starts calls back into it.',
      from: { path: '^app/github/(triggers|outbox|render)/' },
      to: { path: '^app/github/intake/' },
    },
    {
      name: 'github-outbox-and-triggers-stay-apart',
      severity: 'error',
      comment:
        'Triggers change runs; the outbox mirrors them to GitHub later. They meet in the database only.',
      from: { path: '^app/github/(triggers|outbox)/' },
      to: { path: '^app/github/(outbox|triggers)/', pathNot: '^app/github/$1/' },
    },
    // STYLE habit 15: composition roots are leaves. action/ still imports cli/ (issue 10,
    // item 1); TODO(issue 10, branch client): enable once it moves what both use.
    // {
    //   name: 'action-never-imports-cli',
    //   severity: 'error',
    //   from: { path: '^action/' },
    //   to: { path: '^cli/' },
    // },
    {
      name: 'cli-never-imports-action',
      severity: 'error',
      comment: 'Composition roots are leaves (STYLE habit 15).',
      from: { path: '^cli/' },
      to: { path: '^action/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
