/**
 * Functions of READ_TRACE_HOOK kept apart from its install (Python source, joined into the
 * hook's text; the install calls each once, with its own functions): `_fluksio_traced_open`,
 * the `os.open` wrapper, and `_fluksio_started_with`, which reports what Python read as it
 * started, before the hook was installed (`site` processes the `.pth` files of the
 * site-packages folders, then imports `sitecustomize`).
 */
export const READ_TRACE_HELPERS = String.raw`
def _fluksio_traced_open(real_open, emit, busy, get_ident):
    # os.open, reporting a relative path opened in a folder's descriptor: the "open" event
    # names the path but not dir_fd, so "x.csv" would be keyed where the stage runs,
    # another file.
    os = _fluksio_os

    def traced_open(path, flags, *args, **kwargs):
        dir_fd = kwargs.get("dir_fd")
        thread = get_ident()
        if dir_fd is not None and thread not in busy:
            try:
                relative = not os.path.isabs(os.fsdecode(os.fspath(path)))
            except TypeError:
                relative = True
            if relative:
                busy.add(thread)
                try:
                    emit("X", "opened a path relative to a directory descriptor")
                finally:
                    busy.discard(thread)
        return real_open(path, flags, *args, **kwargs)

    return traced_open

def _fluksio_started_with(emit, inside, real_stat, real_listdir):
    # What Python read as it started, before this hook: the site-packages folders' .pth
    # files (an editable install's path, "import" lines), listed so that a new one shows,
    # a virtual environment's pyvenv.cfg, and the modules imported by then (those .pth
    # lines import some). Only those inside the repository: a virtual environment kept in
    # the project decides what a stage imports.
    import stat
    import site

    os, sys = _fluksio_os, _fluksio_sys
    folders = list(getattr(site, "getsitepackages", lambda: [])())
    if getattr(site, "ENABLE_USER_SITE", False) and getattr(site, "USER_SITE", None):
        folders.append(site.USER_SITE)
    for folder in folders:
        for where in inside(folder):
            try:
                if not stat.S_ISDIR(real_stat(where).st_mode):
                    continue
                names = real_listdir(where)
            except OSError:
                continue
            emit("L", where)
            for name in names:
                if name.endswith(".pth"):
                    emit("R", os.path.join(where, name))
    if sys.prefix != sys.base_prefix:
        for where in inside(os.path.join(sys.prefix, "pyvenv.cfg")):
            emit("R", where)
    for module in list(sys.modules.values()):
        filename = getattr(module, "__file__", None)
        if isinstance(filename, str):
            for where in inside(filename):
                emit("R", where)
`;
