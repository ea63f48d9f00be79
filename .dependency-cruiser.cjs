/**
 * The import rules of DESIGN §2 and the README's code map: schemas/ is the leaf, core/
 * (pure shared logic) sees only schemas/, present/ renders from schemas/ and core/,
 * client/ talks to the control plane, host/ (what the operating system offers beyond Node,
 * for every side that does I/O) imports nothing of ours, store/ sees schemas/, core/ and
 * host/, runner/ and app/ never import each other, local/ is the local run over runner/ and
 * store/, and cli/ and action/ wire everything without importing each other; pages/ is
 * browser code that nothing imports.
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
      to: { path: '^(core|present|client|store|runner|local|app|cli|action|host)/' },
    },
    {
      name: 'core-sees-only-schemas',
      severity: 'error',
      comment: 'core/ is the pure logic every side shares: it imports schemas/ and itself only.',
      from: { path: '^core/' },
      to: { path: '^(present|client|store|runner|local|app|cli|action|host)/' },
    },
    {
      name: 'schemas-and-core-do-no-io',
      severity: 'error',
      from: { path: '^(schemas|core)/' },
      to: { dependencyTypes: ['core'], path: IO_MODULES },
    },
    {
      name: 'present-renders-from-schemas',
      severity: 'error',
      comment:
        'present/ turns data into what people read (RunView, the GitHub presentation, the terminal renderers): it imports schemas/, core/ and present/, nothing that runs or stores.',
      from: { path: '^present/' },
      to: { path: '^(client|store|runner|local|app|cli|action|host)/' },
    },
    {
      name: 'present-has-no-io',
      severity: 'error',
      from: { path: '^present/' },
      to: { dependencyTypes: ['core'], path: IO_MODULES },
    },
    {
      name: 'client-sees-schemas-and-present',
      severity: 'error',
      comment:
        'The one control-plane client (runner, cli and action use it) speaks the protocol of schemas/protocol/ and prints with present/; it knows no store, engine or server.',
      from: { path: '^client/' },
      to: { path: '^(store|runner|local|app|cli|action)/' },
    },
    {
      name: 'host-imports-nothing-of-ours',
      severity: 'error',
      comment:
        'host/ wraps what the operating system offers beyond Node (flock(1)) for store/ and runner/ alike, which may not import each other; it knows neither.',
      from: { path: '^host/' },
      to: { path: '^(schemas|core|present|client|store|runner|local|app|cli|action)/' },
    },
    {
      name: 'store-sees-only-schemas-core-and-host',
      severity: 'error',
      from: { path: '^store/' },
      to: { path: '^(present|client|runner|local|app|cli|action)/' },
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
      comment:
        'The engine talks to ports passed in (DESIGN §2); the daemon reaches the control plane through client/.',
      from: { path: '^runner/' },
      to: { path: '^(present|store|local|app|cli|action)/' },
    },
    {
      name: 'runner-engine-never-imports-the-daemon',
      severity: 'error',
      comment: 'The daemon drives the engine; the engine runs without it (fluksio run, the action).',
      from: { path: '^runner/(?!daemon/)' },
      to: { path: '^runner/daemon/' },
    },
    {
      name: 'local-is-no-composition-root',
      severity: 'error',
      comment:
        "The local run and its store (fluksio run, the action's local mode) use runner/ and store/; the roots that wire it in stay out, and it never talks to a control plane.",
      from: { path: '^local/' },
      to: { path: '^(client|app|cli|action)/' },
    },
    {
      name: 'app-never-imports-runner',
      severity: 'error',
      comment:
        'The control plane is the server: the local run and the client of its own API are not its business.',
      from: { path: '^app/' },
      to: { path: '^(runner|local|client|cli|action)/' },
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
    {
      name: 'action-never-imports-cli',
      severity: 'error',
      comment:
        'Composition roots are leaves (STYLE habit 15): what both use lives in client/, local/ or present/.',
      from: { path: '^action/' },
      to: { path: '^cli/' },
    },
    {
      name: 'cli-never-imports-action',
      severity: 'error',
      comment: 'Composition roots are leaves (STYLE habit 15).',
      from: { path: '^cli/' },
      to: { path: '^action/' },
    },
    {
      name: 'pages-is-browser-code',
      severity: 'error',
      comment:
        'pages/ is the browser bundle: it may take types from schemas/ (erased) and browser libraries, nothing that runs on a server.',
      from: { path: '^pages/' },
      to: { path: '^(store|runner|app|cli|action|bench|host)/' },
    },
    {
      name: 'pages-no-node-builtins',
      severity: 'error',
      from: { path: '^pages/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'nothing-imports-pages',
      severity: 'error',
      comment: 'The bundle is built by scripts/bundle-pages.mjs and served as a file, never imported.',
      from: { pathNot: '^pages/' },
      to: { path: '^pages/' },
    },
    {
      name: 'app-pages-stay-out-of-github',
      severity: 'error',
      comment: 'The pages serve fluksio ui too: app/pages/ needs neither Probot nor the outbox.',
      from: { path: '^app/pages/' },
      to: { path: '^app/(github|routes)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
