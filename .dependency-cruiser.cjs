/**
 * The import rules of DESIGN §2 and the README's code map: schemas/ is the leaf,
 * present/ renders from schemas alone, client/ talks to the control plane, store/ sees
 * only schemas/, runner/ and app/ never import each other, local/ is the local run over
 * runner/ and store/, and cli/ and action/ wire everything without importing each other;
 * pages/ is browser code that nothing imports.
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
      to: { path: '^(present|client|store|runner|local|app|cli|action)/' },
    },
    {
      name: 'schemas-has-no-io',
      severity: 'error',
      from: { path: '^schemas/' },
      to: {
        dependencyTypes: ['core'],
        path: '^(fs|fs/promises|child_process|net|http|https|dgram|tls|worker_threads|os)$',
      },
    },
    {
      name: 'present-renders-from-schemas',
      severity: 'error',
      comment:
        'present/ turns data into what people read (RunView, the GitHub presentation, the terminal renderers): it imports schemas/ and present/, nothing that runs or stores.',
      from: { path: '^present/' },
      to: { path: '^(client|store|runner|local|app|cli|action)/' },
    },
    {
      name: 'present-has-no-io',
      severity: 'error',
      from: { path: '^present/' },
      to: {
        dependencyTypes: ['core'],
        path: '^(fs|fs/promises|child_process|net|http|https|dgram|tls|worker_threads|os)$',
      },
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
      name: 'store-sees-only-schemas',
      severity: 'error',
      from: { path: '^store/' },
      to: { path: '^(present|client|runner|local|app|cli|action)/' },
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
      to: { path: '^(store|runner|app|cli|action|bench)/' },
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
