/**
 * The import rules of DESIGN §2: schemas/ is the leaf, store/ sees only schemas/,
 * runner/ and app/ never import each other, cli/ and action/ wire everything; pages/ is
 * browser code that nothing imports.
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
      to: { path: '^(store|runner|app|cli|action)/' },
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
      name: 'store-sees-only-schemas',
      severity: 'error',
      from: { path: '^store/' },
      to: { path: '^(runner|app|cli|action)/' },
    },
    {
      name: 'runner-never-imports-store-or-app',
      severity: 'error',
      comment: 'The engine talks to ports passed in (DESIGN §2).',
      from: { path: '^runner/' },
      to: { path: '^(store|app|cli|action)/' },
    },
    {
      name: 'app-never-imports-runner',
      severity: 'error',
      from: { path: '^app/' },
      to: { path: '^(runner|cli|action)/' },
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
