import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';

interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: object;
}

interface OpenApiOperation {
  operationId: string;
  parameters: OpenApiParameter[];
  requestBody?: { required: boolean; content: { 'application/json': { schema: object } } };
  responses: Record<
    string,
    { content?: { 'application/json': { schema: object; examples: Record<string, unknown> } } }
  >;
}

interface OpenApiSubset {
  info: { 'x-source': { package: string; version: string } };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, object> };
}

/** How a route is authenticated: the app's JWT, an installation token, or only a user's token (`GET /user`). */
export type RouteAuthentication = 'app-jwt' | 'installation-token' | 'user-token';

/** The result of a validation: nothing, or Ajv's errors. */
export type ValidationErrors = ErrorObject[] | undefined;

/** One operation of the subset, ready to match and validate requests. */
export interface GitHubRoute {
  method: string;
  /** The path template, e.g. `/repos/{owner}/{repo}/check-runs`. */
  template: string;
  operationId: string;
  successStatus: number;
  authentication: RouteAuthentication;
  /** The installation permissions, any one of which allows the request (none for token revocation). */
  permissions: ReadonlyArray<readonly [string, 'read' | 'write']>;
  /** Matches a path and returns its raw (still encoded) parameters. */
  match(path: string): Record<string, string> | undefined;
  /** Validates `{ path, query }` and coerces their values to the schema's types, in place. */
  validateParameters(parameters: {
    path: Record<string, unknown>;
    query: Record<string, unknown>;
  }): ValidationErrors;
  /** Validates a JSON body; `undefined` when the operation takes none. */
  validateBody(body: unknown): ValidationErrors;
  /** Validates the double's own answer against the success response's schema. */
  validateResponse(body: unknown): ValidationErrors;
  /** The spec's first example of the success response (a fresh copy each call). */
  example(): unknown;
}

const SUBSET_URL = new URL('./openapi-subset.json', import.meta.url);
const SCHEMA_ID = 'https://fluksio.test/github-openapi-subset.json';

// Which installation permission each operation needs; requests made with a token minted
// for fewer permissions are refused as GitHub does ("Resource not accessible by integration").
const PERMISSIONS: Record<string, ReadonlyArray<readonly [string, 'read' | 'write']>> = {
  'apps/revoke-installation-access-token': [],
  'repos/get': [['metadata', 'read']],
  'repos/get-content': [['contents', 'read']],
  'pulls/get': [['pull_requests', 'read']],
  'repos/get-collaborator-permission-level': [['metadata', 'read']],
  'issues/create-comment': [
    ['issues', 'write'],
    ['pull_requests', 'write'],
  ],
  'issues/list-comments': [
    ['issues', 'read'],
    ['pull_requests', 'read'],
  ],
  'issues/get-comment': [
    ['issues', 'read'],
    ['pull_requests', 'read'],
  ],
  'issues/update-comment': [
    ['issues', 'write'],
    ['pull_requests', 'write'],
  ],
  'reactions/create-for-issue-comment': [
    ['issues', 'write'],
    ['pull_requests', 'write'],
  ],
  'checks/create': [['checks', 'write']],
  'checks/update': [['checks', 'write']],
  'checks/get': [['checks', 'read']],
  'checks/list-annotations': [['checks', 'read']],
  'checks/list-for-ref': [['checks', 'read']],
  'repos/compare-commits-with-basehead': [['contents', 'read']],
  'repos/list-commits': [['contents', 'read']],
};

// Limits GitHub enforces that its description does not state.
const BODY_LIMITS: Record<string, (schema: Record<string, unknown>) => void> = {
  // "Body is too long (maximum is 65536 characters)".
  'issues/create-comment': limitCommentBody,
  'issues/update-comment': limitCommentBody,
};

function limitCommentBody(schema: Record<string, unknown>): void {
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  properties.body = { ...properties.body, maxLength: 65_536 };
}

/**
 * Copies a request-body schema so that objects listing their properties refuse others. GitHub
 * ignores unknown fields; the double is stricter because a misspelt field (`output.summery`)
 * would be silently dropped by GitHub. Branches of `anyOf`/`oneOf`/`allOf` are left alone: they
 * describe only part of the object.
 */
function refuseUnknownFields(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(refuseUnknownFields);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    copy[key] = ['anyOf', 'oneOf', 'allOf'].includes(key) ? value : refuseUnknownFields(value);
  }
  if (copy.properties !== undefined && copy.additionalProperties === undefined && copy.$ref === undefined) {
    copy.additionalProperties = false;
  }
  return copy;
}

/** Points the subset's local `#/components/…` references at the schema registered with Ajv. */
function anchorReferences(schema: unknown): unknown {
  return JSON.parse(
    JSON.stringify(schema).replaceAll('"#/components/', `"${SCHEMA_ID}#/components/`),
  ) as unknown;
}

function newAjv(options: { coerceTypes: boolean; allErrors: boolean }, components: object): Ajv {
  // strict: false because OpenAPI schemas carry keywords JSON Schema does not know (`example`,
  // `x-github`…); Ajv understands OpenAPI's `nullable`.
  const ajv = new Ajv({ ...options, strict: false, validateSchema: false });
  ajvFormats.default(ajv); // CommonJS under NodeNext: the plugin is the `default` property.
  ajv.addSchema({ $id: SCHEMA_ID, components }, undefined, undefined, false);
  return ajv;
}

function lazily<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

function routeFor(
  template: string,
  method: string,
  operation: OpenApiOperation,
  ajv: { strict: () => Ajv; coercing: () => Ajv; responses: () => Ajv },
): GitHubRoute {
  const names: string[] = [];
  const pattern = template
    .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
    .replace(/\{(\w+)\}/g, (_match, name: string) => {
      names.push(name);
      // A file path may keep its slashes unencoded; every other parameter is one segment.
      return name === 'path' ? '(.+)' : '([^/]+)';
    });
  const regex = new RegExp(`^${pattern}$`);
  const successStatus = Object.keys(operation.responses)[0] ?? '200';
  const response = operation.responses[successStatus]?.content?.['application/json'];
  const bodySchema = operation.requestBody?.content['application/json'].schema;

  const parametersOf = (where: 'path' | 'query'): object => {
    const parameters = operation.parameters.filter((parameter) => parameter.in === where);
    return {
      type: 'object',
      properties: Object.fromEntries(parameters.map((parameter) => [parameter.name, parameter.schema])),
      required: parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name),
      additionalProperties: false,
    };
  };
  const parametersValidator = lazily(() =>
    ajv.coercing().compile(
      anchorReferences({
        type: 'object',
        properties: { path: parametersOf('path'), query: parametersOf('query') },
      }) as object,
    ),
  );
  const bodyValidator = lazily(() => {
    if (bodySchema === undefined) return undefined;
    const strictSchema = refuseUnknownFields(bodySchema) as Record<string, unknown>;
    BODY_LIMITS[operation.operationId]?.(strictSchema);
    return ajv.strict().compile(anchorReferences(strictSchema) as object);
  });
  const responseValidator = lazily(() =>
    response ? ajv.responses().compile(anchorReferences(response.schema) as object) : undefined,
  );
  const run = (validator: ValidateFunction | undefined, data: unknown): ValidationErrors =>
    validator === undefined || validator(data) ? undefined : [...(validator.errors ?? [])];

  return {
    method: method.toUpperCase(),
    template,
    operationId: operation.operationId,
    successStatus: Number(successStatus),
    authentication:
      template.startsWith('/app') || template === '/repos/{owner}/{repo}/installation'
        ? 'app-jwt'
        : template === '/user'
          ? 'user-token'
          : 'installation-token',
    permissions: PERMISSIONS[operation.operationId] ?? [],
    match(path) {
      const found = regex.exec(path);
      if (!found) return undefined;
      return Object.fromEntries(names.map((name, index) => [name, found[index + 1] ?? '']));
    },
    validateParameters: (parameters) => run(parametersValidator(), parameters),
    validateBody: (body) => run(bodyValidator(), body),
    validateResponse: (body) => run(responseValidator(), body),
    example: () => structuredClone(Object.values(response?.examples ?? {})[0] ?? {}),
  };
}

/** The subset's routes and where they came from. */
export interface GitHubRoutes {
  routes: GitHubRoute[];
  source: { package: string; version: string };
}

/**
 * Loads `openapi-subset.json` into routes, most specific first. Validators are compiled on first
 * use and shared by every double in the process (compiling the pull-request schema is slow).
 */
export const loadGitHubRoutes = lazily((): GitHubRoutes => {
  const subset = JSON.parse(readFileSync(SUBSET_URL, 'utf8')) as OpenApiSubset;
  // Requests are checked with every error reported; the double's own answers only need a
  // yes or no, and stopping at the first error compiles GitHub's large schemas much faster.
  const strict = lazily(() => newAjv({ coerceTypes: false, allErrors: true }, subset.components));
  const coercing = lazily(() => newAjv({ coerceTypes: true, allErrors: true }, subset.components));
  const responses = lazily(() => newAjv({ coerceTypes: false, allErrors: false }, subset.components));
  const routes = Object.entries(subset.paths).flatMap(([template, operations]) =>
    Object.entries(operations).map(([method, operation]) =>
      routeFor(template, method, operation, { strict, coercing, responses }),
    ),
  );
  const literalSegments = (route: GitHubRoute): number =>
    route.template.split('/').filter((segment) => !segment.startsWith('{')).length;
  routes.sort((a, b) => literalSegments(b) - literalSegments(a));
  const { package: packageName, version } = subset.info['x-source'];
  return { routes, source: { package: packageName, version } };
});
