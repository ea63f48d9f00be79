/**
 * zod's parse options for a schema a process parses a handful of times, as `fluksio run`
 * does its pipeline and its cache entries. Left to itself, zod generates and compiles a
 * fast path for each object schema (`new Function`) on its first parse, which pays off
 * over thousands of parses in a server and costs a one-shot command more than the parses
 * themselves. What is accepted and rejected is the same either way.
 */
export const ONE_SHOT_PARSE = { jitless: true } as const;
