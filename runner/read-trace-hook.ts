/**
 * The `sitecustomize.py` that traces what a Python stage reads (PEP 578 audit hooks).
 * Python imports `sitecustomize` at start-up from the first directory of `sys.path` that
 * has one; fluksio puts a directory of its own first on `PYTHONPATH`, as coverage.py does
 * to reach subprocesses, so the stage and every Python process it starts install the hook.
 * It then loads the user's own `sitecustomize` further down the path, if there is one.
 *
 * Each process appends one line per new fact to `<FLUKSIO_TRACE_DIR>/<pid>` with a raw
 * `os.write` (no buffer to flush): a forked multiprocessing worker leaves through
 * `os._exit` and never runs atexit handlers, so nothing may wait for the end. Lines are
 * `<kind>\t<value>`, paths absolute and only those under `FLUKSIO_TRACE_ROOT`:
 *
 * - `S` a process installed the hook (value: its pid);
 * - `R` a file opened for reading, a module executed (its code object's file, so bytecode
 *   loaded from a cache still names its source) or an extension module imported;
 * - `L` a directory listed by the program, `I` one listed by the import system (which
 *   lists the directories of `sys.path`, so a new module that would shadow an import shows);
 * - `P` a Python program started (it must leave an `S` line of its own);
 * - `X` something that cannot be traced: a non-Python program started, a library of the
 *   repository loaded with ctypes, a path that cannot be written on one line.
 *
 * Files a process opened for writing before reading them are its own data, not inputs.
 */
export const READ_TRACE_HOOK = String.raw`# Written by fluksio for one stage execution: traces what Python reads (PEP 578).
import os as _fluksio_os
import sys as _fluksio_sys


def _fluksio_install():
    os, sys = _fluksio_os, _fluksio_sys
    report_dir = os.environ.get("FLUKSIO_TRACE_DIR")
    root = os.environ.get("FLUKSIO_TRACE_ROOT")
    if not report_dir or not root or not hasattr(sys, "addaudithook"):
        return
    root = os.path.realpath(root)
    prefix = root + os.sep
    state = {"pid": None, "fd": None}
    seen = set()
    written = set()
    python_name = os.path.basename(os.path.realpath(sys.executable or "python"))

    def emit(kind, value):
        value = str(value)
        if "\n" in value or "\t" in value:
            kind, value = "X", "a path that does not fit on one line"
        line = kind + "\t" + value
        pid = os.getpid()
        if state["pid"] != pid:
            # A forked child writes its own file: the parent's lines stay the parent's.
            state["pid"] = pid
            seen.clear()
            state["fd"] = os.open(
                os.path.join(report_dir, str(pid)), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600
            )
        if line in seen:
            return
        seen.add(line)
        os.write(state["fd"], (line + "\n").encode("utf-8", "surrogateescape"))

    def inside(path):
        if isinstance(path, int) or path is None:
            return None
        try:
            path = os.fsdecode(os.fspath(path))
        except TypeError:
            return None
        absolute = os.path.abspath(path)
        if absolute == root or absolute.startswith(prefix):
            return absolute
        real = os.path.realpath(absolute)
        if real == root or real.startswith(prefix):
            return real
        return None

    def is_python(program, env):
        import shutil

        if program is None:
            return False
        program = os.fsdecode(os.fspath(program))
        search = env.get("PATH") if isinstance(env, dict) else os.environ.get("PATH")
        found = program if os.sep in program else shutil.which(program, path=search)
        if found is None:
            return False
        name = os.path.basename(os.path.realpath(found))
        if name == python_name:
            return True
        return name.startswith("python") and all(c.isdigit() or c == "." for c in name[6:])

    def started(program, env):
        if is_python(program, env):
            emit("P", program)
        else:
            emit("X", "started " + os.path.basename(os.fsdecode(os.fspath(program or "?"))))

    def hook(event, args):
        if event == "open":
            path, _mode, flags = args
            where = inside(path)
            if where is None:
                return
            if flags & os.O_ACCMODE == os.O_RDONLY or (flags & os.O_ACCMODE == os.O_RDWR and not flags & os.O_TRUNC):
                if where not in written and not where.endswith(".pyc"):
                    emit("R", where)
            else:
                written.add(where)
        elif event == "exec":
            filename = getattr(args[0], "co_filename", None)
            if filename and not filename.startswith("<"):
                where = inside(filename)
                if where is not None and where not in written:
                    emit("R", where)
        elif event == "import":
            where = inside(args[1]) if len(args) > 1 else None
            if where is not None:
                emit("R", where)
        elif event in ("os.listdir", "os.scandir"):
            path = args[0]
            if isinstance(path, int):
                emit("X", "a directory listed by descriptor")
                return
            where = inside("." if path is None else path)
            if where is not None:
                caller = sys._getframe(1).f_code.co_filename
                emit("I" if caller.startswith("<frozen importlib") else "L", where)
        elif event == "subprocess.Popen":
            executable, argv, _cwd, env = args
            if executable is None:
                executable = argv if isinstance(argv, (str, bytes)) else (argv[0] if argv else None)
            started(executable, env)
        elif event in ("os.exec", "os.posix_spawn"):
            started(args[0], args[2])
        elif event == "os.system":
            emit("X", "started a shell (os.system)")
        elif event == "ctypes.dlopen":
            where = inside(args[0])
            if where is not None:
                emit("X", "loaded " + where + " with ctypes")

    emit("S", os.getpid())
    sys.addaudithook(hook)


def _fluksio_chain():
    # The user's own sitecustomize, if one is further down the path, still runs.
    import importlib.machinery
    import importlib.util

    here = _fluksio_os.path.dirname(_fluksio_os.path.abspath(__file__))
    path = [entry for entry in _fluksio_sys.path if _fluksio_os.path.abspath(entry or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    _fluksio_sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_fluksio_install()
_fluksio_chain()
`;
