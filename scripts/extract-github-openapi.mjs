// Writes test/github/openapi-subset.json: the GitHub REST operations fluksio calls, cut out of
// GitHub's OpenAPI description (@octokit/openapi, pinned below) so the GitHub test double can
// validate every request against GitHub's own schemas without a 385 MB dependency. The package
// is fetched with `npm pack` into a temporary directory and only
// `generated/api.github.com.json` is read from it.
//
//   node scripts/extract-github-openapi.mjs
//
// Parameters, responses and examples are inlined; schemas stay `$ref`s into the subset's own
// `components.schemas`, which carries every schema they reach, so the subset is self-contained.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';

const OPENAPI_PACKAGE = '@octokit/openapi';
// The version @octokit/openapi-types (which types @octokit/rest 22's methods) was generated from.
const OPENAPI_VERSION = '23.0.1';
const OUTPUT = fileURLToPath(new URL('../test/github/openapi-subset.json', import.meta.url));

/** The operations fluksio calls, as `METHOD /path template`, each with why it is needed. */
const OPERATIONS = [
  // Authentication: the app's JWT buys installation tokens; runners' tokens are revoked.
  ['POST /app/installations/{installation_id}/access_tokens', 'installation tokens (Probot, runners)'],
  ['DELETE /installation/token', 'revoking a runner token after the fetch'],
  ['GET /app', 'the app itself (slug, bot login)'],
  ['GET /app/installations/{installation_id}', 'the installation account, for allowed owners'],
  ['GET /repos/{owner}/{repo}/installation', 'the installation of a repository'],
  // Reading the repository at a commit.
  ['GET /repos/{owner}/{repo}', 'the default branch'],
  ['GET /repos/{owner}/{repo}/contents/{path}', 'fluksio.yml at the exact commit'],
  ['GET /repos/{owner}/{repo}/pulls/{pull_number}', 'the head a comment runs, fork detection'],
  ['GET /repos/{owner}/{repo}/collaborators/{username}/permission', 'who may run commands'],
  // Replies, the sweep comparison comment, reactions.
  ['POST /repos/{owner}/{repo}/issues/{issue_number}/comments', 'replies, the sweep comment'],
  ['GET /repos/{owner}/{repo}/issues/{issue_number}/comments', 'finding the sweep comment by its marker'],
  ['GET /repos/{owner}/{repo}/issues/comments/{comment_id}', 'reading a comment back'],
  ['PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', 'editing the sweep comment in place'],
  ['POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', '👀, 🚀 and 😕'],
  // Check runs, written by the outbox.
  ['POST /repos/{owner}/{repo}/check-runs', 'a run becomes a check run'],
  ['PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', 'progress, completion, more annotations'],
  ['GET /repos/{owner}/{repo}/check-runs/{check_run_id}', 'reading a check run back'],
  ['GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations', 'reading annotations back'],
  ['GET /repos/{owner}/{repo}/commits/{ref}/check-runs', 'adopting a check run by external_id'],
  // The baseline of a metric diff: the merge base, then its ancestors.
  ['GET /repos/{owner}/{repo}/compare/{basehead}', 'the merge base'],
  ['GET /repos/{owner}/{repo}/commits', 'the merge base’s ancestors'],
  // Sign-in on the run pages: who a user token belongs to (its repository access is `GET /repos/{owner}/{repo}`).
  ['GET /user', 'the signed-in user of the run pages'],
];

/** Downloads the pinned package into a temporary directory and parses its description. */
function loadDescription() {
  const dir = mkdtempSync(join(tmpdir(), 'fluksio-openapi-'));
  try {
    const packed = execFileSync(
      'npm',
      ['pack', `${OPENAPI_PACKAGE}@${OPENAPI_VERSION}`, '--pack-destination', dir, '--silent'],
      { encoding: 'utf8' },
    ).trim();
    const tarball = join(dir, packed.split('\n').at(-1));
    const member = 'package/generated/api.github.com.json';
    execFileSync('tar', ['-xzf', tarball, '-C', dir, member]);
    return JSON.parse(readFileSync(join(dir, member), 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Follows a local `#/…` reference in the full description. */
function lookUp(description, ref) {
  if (!ref.startsWith('#/')) throw new Error(`Unexpected non-local $ref "${ref}"`);
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node, key) => {
      if (node === undefined || !(key in node)) throw new Error(`Unresolvable $ref "${ref}"`);
      return node[key];
    }, description);
}

/** Replaces a `$ref` to anything but a schema (parameters, responses, examples) by its target. */
function inline(description, node) {
  let current = node;
  while (current && typeof current.$ref === 'string' && !current.$ref.startsWith('#/components/schemas/')) {
    current = lookUp(description, current.$ref);
  }
  return current;
}

/**
 * Copies a schema with the two changes Ajv needs to accept what GitHub sends: a nullable schema's
 * `enum` gains `null` (Ajv checks the enum even when `nullable` allows null), and a nullable
 * `oneOf`/`anyOf` without a `type` (Ajv refuses `nullable` without `type`) gains a
 * `{ type: 'null' }` alternative instead.
 */
function fixSchema(node) {
  if (Array.isArray(node)) return node.map(fixSchema);
  if (node === null || typeof node !== 'object') return node;
  const copy = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, fixSchema(value)]));
  if (copy.nullable === true && Array.isArray(copy.enum) && !copy.enum.includes(null)) {
    copy.enum = [...copy.enum, null];
  }
  for (const combinator of ['oneOf', 'anyOf']) {
    if (copy.nullable === true && copy.type === undefined && Array.isArray(copy[combinator])) {
      delete copy.nullable;
      copy[combinator] = [...copy[combinator], { type: 'null' }];
    }
  }
  return copy;
}

/** Collects the names of the component schemas `node` reaches, following references transitively. */
function collectSchemaRefs(description, node, names = new Set()) {
  if (Array.isArray(node)) {
    for (const item of node) collectSchemaRefs(description, item, names);
  } else if (node !== null && typeof node === 'object') {
    if (typeof node.$ref === 'string') {
      const name = node.$ref.replace('#/components/schemas/', '');
      if (!names.has(name)) {
        names.add(name);
        collectSchemaRefs(description, lookUp(description, node.$ref), names);
      }
    }
    for (const [key, value] of Object.entries(node))
      if (key !== '$ref') collectSchemaRefs(description, value, names);
  }
  return names;
}

/** The operation with parameters and its one success response inlined, and examples as values. */
function extractOperation(description, method, path) {
  const operation = description.paths[path]?.[method];
  if (!operation)
    throw new Error(`${method.toUpperCase()} ${path} is not in ${OPENAPI_PACKAGE}@${OPENAPI_VERSION}`);
  const successStatus = Object.keys(operation.responses)
    .filter((status) => status.startsWith('2'))
    .sort()[0];
  const response = inline(description, operation.responses[successStatus]);
  const content = response.content?.['application/json'];
  const examples = Object.fromEntries(
    Object.entries(content?.examples ?? {}).map(([name, example]) => [
      name,
      inline(description, example).value,
    ]),
  );
  const body = operation.requestBody && inline(description, operation.requestBody);
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    documentation: operation.externalDocs?.url,
    parameters: (operation.parameters ?? []).map((parameter) => inline(description, parameter)),
    ...(body && {
      requestBody: {
        required: body.required ?? false,
        content: { 'application/json': { schema: body.content['application/json'].schema } },
      },
    }),
    responses: {
      [successStatus]: {
        description: response.description,
        ...(content && { content: { 'application/json': { schema: content.schema, examples } } }),
      },
    },
  };
}

/**
 * Corrects the description where GitHub sends what it does not allow: a pull request whose
 * fork was deleted has `head.repo: null`, which the `pull-request` schema does not admit.
 */
function correctSchemas(schemas) {
  const head = schemas['pull-request'].properties.head;
  head.properties.repo = { anyOf: [head.properties.repo, { type: 'null' }] };
  return schemas;
}

/** Builds the subset document: an OpenAPI 3.0 description of just `OPERATIONS`. */
function buildSubset(description) {
  const paths = {};
  for (const [route, purpose] of OPERATIONS) {
    const [method, path] = route.split(' ');
    const operation = extractOperation(description, method.toLowerCase(), path);
    paths[path] = { ...paths[path], [method.toLowerCase()]: { ...operation, 'x-fluksio-purpose': purpose } };
  }
  const fixedPaths = fixSchema(paths);
  const names = [...collectSchemaRefs(description, fixedPaths)].sort();
  const schemas = correctSchemas(
    Object.fromEntries(
      names.map((name) => [name, fixSchema(lookUp(description, `#/components/schemas/${name}`))]),
    ),
  );
  return {
    openapi: description.openapi,
    info: {
      title: `A subset of ${description.info.title} for fluksio's GitHub test double`,
      version: description.info.version,
      'x-source': {
        package: OPENAPI_PACKAGE,
        version: OPENAPI_VERSION,
        file: 'generated/api.github.com.json',
        script: 'scripts/extract-github-openapi.mjs',
        fixes: [
          'a nullable schema whose enum lacks null: null added to the enum',
          'a nullable oneOf/anyOf without a type: nullable replaced by a { type: null } alternative',
          'pull-request head.repo may be null (a deleted fork), as GitHub sends it',
        ],
      },
    },
    servers: description.servers,
    paths: fixedPaths,
    components: { schemas },
  };
}

const subset = buildSubset(loadDescription());
const options = (await prettier.resolveConfig(OUTPUT)) ?? {};
writeFileSync(OUTPUT, await prettier.format(JSON.stringify(subset), { ...options, filepath: OUTPUT }));
process.stdout.write(
  `Wrote ${OUTPUT}: ${OPERATIONS.length} operations, ${Object.keys(subset.components.schemas).length} schemas from ${OPENAPI_PACKAGE}@${OPENAPI_VERSION}\n`,
);
