import { READ_TRACE_HELPERS } from './read-trace-helpers.js';

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
 *   loaded from a cache still names its source), an extension module imported, or a SQLite
 *   database connected to (with its `-wal` and `-journal` files);
 * - `L` a directory listed by the program, `I` one listed by the import system (which
 *   lists the directories of `sys.path`, so a new module that would shadow an import shows);
 * - `P` a Python program started (it must leave an `S` line of its own);
 * - `E` a path looked up without being opened (`os.path.exists`, `isfile`, `getsize`,
 *   `Path.is_dir`, `os.access`, `os.readlink`…: `os.stat`, `os.lstat`, `os.access` and
 *   `os.readlink` raise no audit event, so the hook wraps them): value `<state>\0<path>`,
 *   the state that lookup saw (`stat absent`, `stat dir`, `stat file <size> <x|->`,
 *   `lstat link <target>`…; `lstat` when it did not follow a last link), so a file that
 *   appears where the stage found none, or a folder that goes, shows;
 * - `X` something that cannot be traced: a non-Python program started, a Python program
 *   started so that it will not install the hook (`-I`, `-E`, `-S`, or an environment
 *   without the hook's variables: a process multiprocessing spawns unannounced reports
 *   too, so counting reports alone would let it stand in), a library of the repository
 *   loaded with ctypes, a path that cannot be written on one line, a file opened relative
 *   to a directory descriptor (`os.open(name, flags, dir_fd=…)`: the event does not say
 *   which folder).
 *
 * Files a process emptied (opened with `O_TRUNC`) or created (`O_EXCL`) before reading them
 * are its own data, not inputs. A file opened for writing that keeps what was there (`"a"`,
 * `O_WRONLY` alone) is not: what a later read sees still depends on what was there before,
 * or on its being absent.
 */
export const READ_TRACE_HOOK =
  String.raw`# Written by fluksio for one stage execution: traces what Python reads (PEP 578).
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
    import stat
    from _thread import get_ident

    # Threads inside the hook or a wrapped lookup: their own lookups are not the program's.
    busy = set()
    resolved = {}
    reported = set()
    real_stat, real_lstat, real_access, real_readlink = os.stat, os.lstat, os.access, os.readlink

    def emit(kind, value):
        value = str(value)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            kind, value = "X", "used a path that is not UTF-8"
        if "\n" in value or "\t" in value:
            kind, value = "X", "used a path that does not fit on one line"
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
        os.write(state["fd"], (line + "\n").encode("utf-8"))

    def within(path):
        return path == root or path.startswith(prefix)

    def inside(path):
        # The repository paths a path names: itself and, through symlinks, what it leads to.
        if isinstance(path, int) or path is None:
            return []
        try:
            path = os.fsdecode(os.fspath(path))
        except TypeError:
            return []
        absolute = os.path.abspath(path)
        # Resolved as the kernel resolves it: a link before a ".." is followed first
        # ("current/../labels.csv" opens the file beside the link's target, not beside the
        # link), so the real path comes from the path as spelt, not from its lexical form.
        real = os.path.realpath(path)
        if within(absolute) and not within(real):
            emit("X", "used " + os.path.relpath(absolute, root) + ", a link that leads out of the repository")
            return []
        return [each for each in dict.fromkeys((absolute, real)) if within(each)]

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

    site_dir = os.path.dirname(os.path.abspath(__file__))

    def unreported(argv, env):
        # Why a Python child will not install this hook, or None: the count of reports
        # cannot tell, since processes nobody announces (multiprocessing's spawn, loky)
        # report too and would stand in for it.
        words = [] if isinstance(argv, (str, bytes)) or argv is None else list(argv)[1:]
        skip = False
        for word in words:
            word = os.fsdecode(word) if isinstance(word, bytes) else str(word)
            if skip:
                skip = False
                continue
            if word in ("-", "--") or not word.startswith("-"):
                break
            if word.startswith("--"):
                skip = word == "--check-hash-based-pycs"
                continue
            for at, letter in enumerate(word[1:]):
                if letter in "IES":
                    return "-" + letter
                if letter in "cm":
                    return None
                if letter in "WX":
                    skip = at == len(word) - 2
                    break
        variables = os.environ if env is None else env

        def variable(name):
            for key in (name, os.fsencode(name)):
                try:
                    value = variables.get(key)
                except TypeError:
                    value = None
                if value is not None:
                    return os.fsdecode(value)
            return None

        path = variable("PYTHONPATH") or ""
        if site_dir not in [os.path.abspath(entry) for entry in path.split(os.pathsep) if entry]:
            return "an environment without fluksio's PYTHONPATH"
        if variable("FLUKSIO_TRACE_DIR") != report_dir or variable("FLUKSIO_TRACE_ROOT") is None:
            return "an environment without fluksio's trace variables"
        return None

    def started(program, argv, env):
        if not is_python(program, env):
            emit("X", "started " + os.path.basename(os.fsdecode(os.fspath(program or "?"))))
            return
        try:
            why = unreported(argv, env)
        except Exception as error:
            why = "arguments fluksio could not read (" + type(error).__name__ + ")"
        if why is None:
            emit("P", program)
        else:
            name = os.path.basename(os.fsdecode(os.fspath(program)))
            emit("X", "started " + name + " with " + why + ", so it leaves no report")

    def sqlite_files(database):
        # The files a connection to this database reads; a "file:" name may be a URI
        # (uri=True is not in the event), so both readings count.
        try:
            name = os.fsdecode(os.fspath(database))
        except TypeError:
            return []
        if name in ("", ":memory:"):
            return []
        names = [name]
        if name.startswith("file:"):
            from urllib.parse import unquote, urlsplit

            parts = urlsplit(name)
            if parts.netloc in ("", "localhost") and parts.path:
                names.append(unquote(parts.path))
        return [each + suffix for each in names for suffix in ("", "-wal", "-journal")]

    def hook(event, args):
        # What the hook itself looks up (realpath, which) is not the program's.
        thread = get_ident()
        if thread in busy:
            return
        busy.add(thread)
        try:
            traced_event(event, args)
        finally:
            busy.discard(thread)

    def traced_event(event, args):
        if event == "open":
            path, _mode, flags = args
            reading = flags & os.O_ACCMODE == os.O_RDONLY or (
                flags & os.O_ACCMODE == os.O_RDWR and not flags & os.O_TRUNC
            )
            own = flags & (os.O_TRUNC | os.O_EXCL)
            for where in inside(path):
                if not reading:
                    if own:
                        written.add(where)
                elif where not in written and not where.endswith(".pyc"):
                    emit("R", where)
        elif event == "exec":
            filename = getattr(args[0], "co_filename", None)
            if filename and not filename.startswith("<"):
                for where in inside(filename):
                    if where not in written:
                        emit("R", where)
        elif event == "import":
            for where in inside(args[1] if len(args) > 1 else None):
                emit("R", where)
        elif event in ("os.listdir", "os.scandir"):
            path = args[0]
            if isinstance(path, int):
                emit("X", "listed a directory by descriptor")
                return
            # Frame 0 is this function, 1 the hook, 2 what raised the event.
            caller = sys._getframe(2).f_code.co_filename
            for where in inside("." if path is None else path):
                emit("I" if caller.startswith("<frozen importlib") else "L", where)
        elif event == "subprocess.Popen":
            executable, argv, _cwd, env = args
            if executable is None:
                executable = argv if isinstance(argv, (str, bytes)) else (argv[0] if argv else None)
            started(executable, argv, env)
        elif event in ("os.exec", "os.posix_spawn"):
            started(args[0], args[1], args[2])
        elif event == "os.system":
            emit("X", "started a shell (os.system)")
        elif event == "sqlite3.connect":
            # SQLite reads the database (and its journals) natively, past the open hook.
            for name in sqlite_files(args[0]):
                for where in inside(name):
                    emit("R", where)
        elif event == "ctypes.dlopen":
            for where in inside(args[0]):
                emit("X", "loaded " + os.path.relpath(where, root) + " with ctypes")

    def state_of(result, path):
        mode = result.st_mode
        if stat.S_ISDIR(mode):
            return "dir"
        if stat.S_ISREG(mode):
            return "file %d %s" % (result.st_size, "x" if mode & 0o100 else "-")
        if stat.S_ISLNK(mode):
            return "link " + os.fsdecode(real_readlink(path))
        return "other"

    def looked_up(path, follow, dir_fd, result, error):
        # What one lookup of the program saw, for each repository path it names.
        if isinstance(path, int) or path is None:
            return
        if dir_fd is not None:
            emit("X", "looked up a path relative to a directory descriptor")
            return
        try:
            path = os.fsdecode(os.fspath(path))
        except TypeError:
            return
        if error is None:
            try:
                state = ("stat " if follow else "lstat ") + state_of(result, path)
            except OSError:
                emit("X", "looked up " + path + " as it changed")
                return
        elif isinstance(error, (FileNotFoundError, NotADirectoryError)):
            state = ("stat " if follow else "lstat ") + "absent"
        else:
            emit("X", "could not look up " + path + " (" + type(error).__name__ + ")")
            return
        # Programs look the same paths up again and again: each is resolved once.
        memo = (follow, path if path.startswith("/") else os.path.join(os.getcwd(), path))
        if (memo, state) in reported:
            return
        reported.add((memo, state))
        where = resolved.get(memo)
        if where is None:
            if follow:
                where = inside(path)
            else:
                # The link itself: its folder resolved (a ".." after a link as the kernel
                # takes it), its own name kept.
                absolute = os.path.abspath(path)
                spelt = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
                folder, name = os.path.split(spelt.rstrip(os.sep) or os.sep)
                if name in ("", ".", ".."):
                    folder, name = os.path.split(os.path.realpath(spelt))
                named = os.path.join(os.path.realpath(folder), name)
                if within(absolute) and not within(named):
                    emit("X", "used " + os.path.relpath(absolute, root) + ", a link that leads out of the repository")
                    return
                where = [named] if within(named) else []
            resolved[memo] = where
        for each in where:
            if each not in written:
                emit("E", state + "\0" + each)

    def tracing(lookup, follow_of, own_result):
        def traced(path, *args, **kwargs):
            thread = get_ident()
            if thread in busy:
                return lookup(path, *args, **kwargs)
            follow, dir_fd = follow_of(kwargs), kwargs.get("dir_fd")
            try:
                result = lookup(path, *args, **kwargs)
            except OSError as error:
                busy.add(thread)
                try:
                    looked_up(path, follow, dir_fd, None, error)
                finally:
                    busy.discard(thread)
                raise
            busy.add(thread)
            try:
                if own_result:
                    looked_up(path, follow, dir_fd, result, None)
                else:
                    # os.access and os.readlink answer less than a stat: look the path up.
                    try:
                        seen = (real_stat if follow else real_lstat)(path, dir_fd=dir_fd)
                    except OSError as error:
                        looked_up(path, follow, dir_fd, None, error)
                    else:
                        looked_up(path, follow, dir_fd, seen, None)
            finally:
                busy.discard(thread)
            return result

        traced.__name__ = lookup.__name__
        traced.__qualname__ = lookup.__qualname__
        traced.__doc__ = lookup.__doc__
        return traced

    real_open = os.open

    traced_open = _fluksio_traced_open(real_open, emit, busy, get_ident)
    traced_open.__name__ = real_open.__name__
    traced_open.__qualname__ = real_open.__qualname__
    traced_open.__doc__ = real_open.__doc__
    os.open = traced_open

    def started_with():
        _fluksio_started_with(emit, inside, real_stat, os.listdir)

    follows = lambda kwargs: kwargs.get("follow_symlinks", True)
    never = lambda kwargs: False
    os.stat = tracing(real_stat, follows, True)
    os.lstat = tracing(real_lstat, never, True)
    os.access = tracing(real_access, follows, False)
    os.readlink = tracing(real_readlink, never, False)
    # What a function supports is asked by identity (shutil.copystat stats a link itself
    # only through an os.stat in supports_follow_symlinks, and gets None otherwise): each
    # wrapper supports what the function it wraps does.
    for real, wrapper in (
        (real_stat, os.stat),
        (real_lstat, os.lstat),
        (real_access, os.access),
        (real_readlink, os.readlink),
        (real_open, os.open),
    ):
        for supports in (os.supports_dir_fd, os.supports_fd, os.supports_follow_symlinks, os.supports_effective_ids):
            if real in supports:
                supports.add(wrapper)

    emit("S", os.getpid())
    started_with()
    sys.addaudithook(hook)


` +
  READ_TRACE_HELPERS +
  String.raw`

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
