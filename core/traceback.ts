import { posix } from 'node:path';

/** Where paths in a stage's output are resolved: relative ones against `cwd`. Both absolute. */
export interface PathContext {
  cwd: string;
  repoRoot: string;
}

/** One call in a traceback. */
export interface TracebackFrame {
  /** Relative to the repository root (posix); null outside it or for no file (`<string>`). */
  path: string | null;
  /** The file resolved to an absolute path, or the location as printed when it is no file. */
  absPath: string;
  line: number;
  function: string | null;
}

/** A Python or Node traceback found in a stage's output. */
export interface ParsedTraceback {
  language: 'python' | 'node';
  /** The exception line: `ZeroDivisionError: division by zero`. */
  message: string;
  /** Most recent call last for both languages (Node's are reversed), so the innermost is last. */
  frames: TracebackFrame[];
  /** The traceback's lines as printed, for a failure summary. */
  text: string;
}

const PYTHON_HEADER = /^Traceback \(most recent call last\):$/;
const PYTHON_GROUP_HEADER = /^(\s*)\+ Exception Group Traceback \(most recent call last\):$/;
const PYTHON_FRAME = /^\s+File "(.+)", line (\d+)(?:, in (.+))?$/;
const PYTHON_CHAIN =
  /^(During handling of the above exception, another exception occurred:|The above exception was the direct cause of the following exception:)$/;
const NODE_FRAME = /^\s+at \S/;
const NODE_ELIDED = /^\s+\.\.\. \d+ lines? matching cause stack trace \.\.\.$/;
/** The line right before Node's frames: `TypeError: msg`, `Error [ERR_X]: msg`. */
const NODE_HEADER = /^(?:Uncaught )?[A-Z][\w$.]*(?: \[[^\]]+\])?: /;
/** Further up, past a multi-line message, only a name that reads as an error counts. */
const NODE_ERROR_HEADER = /^(?:Uncaught )?(?:[A-Za-z_$][\w$.]*)?(?:Error|Exception)(?: \[[^\]]+\])?(?::|$)/;
const NODE_MESSAGE_LOOKBACK = 20;
/** Code a repository carries but did not write; a traceback points past it. */
const DEPENDENCY_DIR = /(?:^|\/)(?:node_modules|site-packages|dist-packages)\//;

/**
 * The text of each traceback in output lines read away from where they were printed (a
 * stored log tail): no paths are resolved, so no working directory is needed.
 */
export function tracebackTexts(lines: readonly string[]): string[] {
  return parseTracebacks(lines, { cwd: '/', repoRoot: '/' }).map((traceback) => traceback.text);
}

/**
 * Finds the Python and Node tracebacks in a stage's output lines, in order. Python:
 * `Traceback (most recent call last):`, its `File "…", line N, in f` frames and the
 * exception line; of a chain ("During handling of the above exception…", "The above
 * exception was the direct cause…") only the last traceback is reported, with the
 * whole chain as its text; an exception group reports the group's own frames and
 * message. Node: an error line followed by `at` frames; a `[cause]` is part of its
 * error. Pure: paths are resolved with `node:path` only, never the file system.
 */
export function parseTracebacks(lines: readonly string[], context: PathContext): ParsedTraceback[] {
  const found: ParsedTraceback[] = [];
  // Where a chain message said the next traceback starts, and where the chain began.
  let chain: { at: number; textStart: number } | null = null;
  let i = 0;
  while (i < lines.length) {
    const read = readPython(lines, i, context) ?? readNode(lines, i, context);
    if (read === null) {
      i++;
      continue;
    }
    let textStart = read.start;
    if (chain !== null && chain.at === read.start) {
      textStart = chain.textStart;
      found.pop();
      read.traceback.text = lines.slice(textStart, read.end).join('\n');
    }
    found.push(read.traceback);
    chain = null;
    i = read.end;
    const next = read.traceback.language === 'python' ? chainedHeader(lines, read.end) : null;
    if (next !== null) {
      chain = { at: next, textStart };
      i = next;
    }
  }
  return found;
}

/**
 * The file of a path printed by a stage (a traceback frame, an `::error file=`),
 * relative to the repository root in posix form; null when it lies outside the
 * repository or is no file at all (`<frozen importlib._bootstrap>`, `node:internal/…`).
 */
export function repoRelativePath(file: string, context: PathContext): string | null {
  return locate(file, context).path;
}

/**
 * The innermost frame in the repository's own code — the line to annotate. Frames in
 * `node_modules/`, `site-packages/` or `dist-packages/` are skipped even inside the
 * repository (a virtualenv in the checkout): that code is not what the change broke.
 */
export function innermostRepoFrame(traceback: ParsedTraceback): TracebackFrame | null {
  for (let i = traceback.frames.length - 1; i >= 0; i--) {
    const frame = traceback.frames[i]!;
    if (frame.path !== null && !DEPENDENCY_DIR.test(frame.path)) return frame;
  }
  return null;
}

interface Read {
  traceback: ParsedTraceback;
  /** The index of its first line and the index after its last. */
  start: number;
  end: number;
}

function readPython(lines: readonly string[], start: number, context: PathContext): Read | null {
  const first = lines[start]!;
  if (PYTHON_HEADER.test(first)) {
    const body = readPythonBody(lines, start + 1, context);
    if (body === null) return null;
    return { start, end: body.end, traceback: pythonTraceback(body, lines.slice(start, body.end)) };
  }
  const group = PYTHON_GROUP_HEADER.exec(first);
  if (group === null) return null;
  // The group's own traceback is the block prefixed `| ` at the header's indentation;
  // its sub-exceptions are nested deeper and left out.
  const indent = group[1]!;
  const prefix = `${indent}| `;
  const own: string[] = [];
  for (let i = start + 1; i < lines.length && lines[i]!.startsWith(prefix); i++) {
    own.push(lines[i]!.slice(prefix.length));
  }
  const body = readPythonBody(own, 0, context);
  if (body === null) return null;
  let end = start + 1 + own.length;
  while (end < lines.length && isGroupLine(lines[end]!, indent)) end++;
  return { start, end, traceback: pythonTraceback(body, lines.slice(start, end)) };
}

interface PythonBody {
  frames: TracebackFrame[];
  message: string;
  end: number;
}

/** Frames (with their source and caret lines) up to the unindented exception line. */
function readPythonBody(lines: readonly string[], from: number, context: PathContext): PythonBody | null {
  const frames: TracebackFrame[] = [];
  for (let i = from; i < lines.length; i++) {
    const line = lines[i]!;
    const frame = PYTHON_FRAME.exec(line);
    if (frame !== null) {
      frames.push({ ...locate(frame[1]!, context), line: Number(frame[2]), function: frame[3] ?? null });
    } else if (line.trim() === '') {
      return null;
    } else if (!/^\s/.test(line)) {
      return { frames, message: line, end: i + 1 };
    }
  }
  return null;
}

function pythonTraceback(body: PythonBody, text: readonly string[]): ParsedTraceback {
  return { language: 'python', message: body.message, frames: body.frames, text: text.join('\n') };
}

function isGroupLine(line: string, indent: string): boolean {
  return line.startsWith(indent) && /^\s*[|+]/.test(line.slice(indent.length));
}

/** After a traceback: the index of the next one when a chain message links them. */
function chainedHeader(lines: readonly string[], from: number): number | null {
  let i = from;
  while (i < lines.length && lines[i]!.trim() === '') i++;
  if (i >= lines.length || !PYTHON_CHAIN.test(lines[i]!)) return null;
  i++;
  while (i < lines.length && lines[i]!.trim() === '') i++;
  const header = lines[i];
  return header !== undefined && (PYTHON_HEADER.test(header) || PYTHON_GROUP_HEADER.test(header)) ? i : null;
}

function readNode(lines: readonly string[], start: number, context: PathContext): Read | null {
  if (!NODE_FRAME.test(lines[start]!) || (start > 0 && NODE_FRAME.test(lines[start - 1]!))) return null;
  let end = start;
  while (end < lines.length && (NODE_FRAME.test(lines[end]!) || NODE_ELIDED.test(lines[end]!))) end++;
  const header = nodeHeader(lines, start);
  if (header === null) return null;
  const frames = lines
    .slice(start, end)
    .map((line) => nodeFrame(line, context))
    .filter((frame) => frame !== null)
    .reverse();
  const message = lines[header]!.replace(/^Uncaught /, '');
  return {
    start: header,
    end,
    traceback: { language: 'node', message, frames, text: lines.slice(header, end).join('\n') },
  };
}

/** The index of the error line above a run of frames; a message may span lines, blank ones too. */
function nodeHeader(lines: readonly string[], framesStart: number): number | null {
  const before = lines[framesStart - 1];
  if (before !== undefined && NODE_HEADER.test(before)) return framesStart - 1;
  const stop = Math.max(0, framesStart - NODE_MESSAGE_LOOKBACK);
  for (let i = framesStart - 1; i >= stop; i--) {
    const line = lines[i]!;
    if (NODE_FRAME.test(line)) return null;
    if (NODE_ERROR_HEADER.test(line)) return i;
  }
  return null;
}

/** `    at fn (/abs/file.js:10:5)`, `    at /abs/file.js:10:5`, `    at async file:///x.mjs:3:7 {` */
function nodeFrame(line: string, context: PathContext): TracebackFrame | null {
  let call = line
    .trim()
    .slice('at '.length)
    .replace(/^async /, '')
    .replace(/ \{$/, '');
  let fn: string | null = null;
  const open = call.indexOf(' (');
  if (open !== -1 && call.endsWith(')')) {
    fn = call.slice(0, open);
    call = call.slice(open + 2, -1);
  }
  const at = /^(.+):(\d+):\d+$/.exec(call);
  if (at === null) return null;
  return { ...locate(at[1]!, context), line: Number(at[2]), function: fn };
}

function locate(file: string, context: PathContext): { path: string | null; absPath: string } {
  // Not files: `node:internal/…`, `<frozen …>`, `<string>`, `[eval]`, `eval at f (…)`.
  if (!file.startsWith('file://') && /^[a-z][\w+.-]*:|^[<[]|[<>()]/i.test(file)) {
    return { path: null, absPath: file };
  }
  const absPath = posix.resolve(context.cwd, file.startsWith('file://') ? fileUrlPath(file) : file);
  const relative = posix.relative(posix.resolve(context.repoRoot), absPath);
  const outside =
    relative === '' || relative === '..' || relative.startsWith('../') || posix.isAbsolute(relative);
  return { path: outside ? null : relative, absPath };
}

/** `file:///a/b%20c.mjs` → `/a/b c.mjs`, without `node:url` (this module stays path-only). */
function fileUrlPath(url: string): string {
  const path = url.slice('file://'.length);
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
