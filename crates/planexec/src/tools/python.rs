//! The `python` tool: a short Python 3 program, run in the workspace folder,
//! whose printed output is the step's result.
//!
//! Picking, filtering, extracting, deduplicating or reformatting a text is
//! where a small model's reasoning step goes wrong (the longest of five
//! lines, the names that appear twice) and where no fixed tool fits every
//! task. A program does it exactly, and the embedded model is a code model:
//! it writes `print(max(open('quotes.txt').read().splitlines(), key=len))`
//! far more reliably than it picks the line itself. This is the "code as
//! action" of smolagents' CodeAgent, as one tool a plan step calls.
//!
//! A program can do anything the user can, so the tool is an external side
//! effect like the shell: confirmed in `ask` mode, refused in `plan` mode.
//! It runs with the shell's time limit and output caps, in its own process
//! group (stopped with everything it started). Its error says what to
//! change: the program's own lines the exception passed through, with
//! their text (not the launcher's or a library's frames, which pushed them
//! out: a `json.load` error was five frames of `json/decoder.py`), the
//! exception, and what it means here when the launcher can tell: the text
//! a JSON parser was given begins `apiVersion: v1` (it is no JSON), only
//! the standard library is installed (`tomllib` reads TOML), `car.txt` is
//! a file and no variable, the folder holds these files.
//!
//! A model that writes code in a plan of tool calls calls the file tools
//! from it too (`write_file('numbered.txt', text)`, a `NameError` before),
//! so `read_file(path)` and `write_file(path, content)` are functions of
//! the program: they do what `open` does, in the same folder, no more.
//!
//! The results of the step's dependencies are variables of the program,
//! named by their step ids (`s1` is the text s1 returned), and a result read
//! from a file also by the file's name (`name` for `name.txt`, unless that
//! is a builtin or taken, and `name.txt` too): models write
//! `s1.split('.')`, `name.upper()` or `float(name.txt)`
//! as if the plan were a notebook, and a value handed over
//! needs no quoting, where a `{{s1}}` spliced into code breaks on the first
//! quote in it. The program, its inputs and a repaired copy (below) reach
//! Python as JSON on its standard input, read by a short launcher.
//!
//! A model writing code inside a JSON string often means `\n` in a Python
//! string literal and writes the JSON escape for a newline, so the program
//! gets a line break inside `'...'` and does not compile. When the code as
//! written does not compile, the launcher runs the copy with those breaks
//! written as `\n` ([`newlines_in_literals_escaped`]) if that one does,
//! or the copy without a last `}` that closes nothing: the JSON object's
//! own brace, written into the string (`print(n)}`), as the 1.5B model did
//! in 7 of its 44 programs on held-out-8 ([`repaired_copies`]).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::shell::{run_fed, ShellConfig};
use super::workspace::Workspace;
use super::{Effect, Tool, ToolError};

/// Lines of a failed program's standard error its error keeps: a traceback's
/// last lines name the line and the exception.
const ERROR_LINES: usize = 8;

/// What `python3 -c` runs: read the program, its inputs and its repaired
/// copy from standard input, parse the program (or, when it does not
/// parse, the copy, if that one does) and run it with the inputs as its
/// variables. A program that prints nothing shows the value of its last
/// line, an expression or an assignment to a name, as a notebook does
/// (`patch = int(s1.split('.')[2]) + 1` returns the new patch number).
/// The standard modules models use most (`re`, `json`, `csv`, `datetime`,
/// …) are there without an import: a recovery that rewrites a failed line
/// keeps only that line, and on held-out-9 the 1.5B model's lost its
/// `import re` and failed on a NameError. They are imported when a name is
/// first looked up and found nowhere else, as are a value a dependency's
/// program made (its program is run again, quietly, when it cannot change
/// a file) and the text of a file with no extension named as a variable
/// (`ssh_config`), and the workspace tools a program calls by their names
/// (`list_dir`, `read_json`, `read_csv`, `glob`): of 50 checking programs
/// that failed in the held-out-8 to -10 ledgers, 7 did so on a NameError
/// for one of them. A program that does not compile
/// is told where in its own lines, not in the launcher's `ast.parse`.
/// Where no `toml` package is installed, `import toml` gets its `load`
/// and `loads` read by the standard library's `tomllib`: the 1.5B model
/// imports `toml`, and told it is missing, imported it again four times.
/// `tomllib` (and that `toml`) gets a `dump` and `dumps`, which the
/// standard library lacks: all seven of the model's programs for a misting
/// controller's edit (held-out-52, spent) set the value in the parsed
/// table and failed on `tomllib.dump`, told each time that it cannot
/// write. The dump's layout is the writer's; the edit it makes is carried
/// back to the file's own lines ([`crate::carry_back`]).
const LAUNCHER: &str = r#"import sys
# What -P does: the working folder's files (a json.py) do not shadow modules.
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
import ast, json
given = json.load(sys.stdin)
def read_file(path):
    with open(path, encoding="utf-8") as f:
        return f.read()
def write_file(path, content):
    if isinstance(content, (list, tuple)):
        content = "\n".join(str(item) for item in content)
    with open(path, "w", encoding="utf-8") as f:
        f.write(str(content))
    return "wrote " + path
scope = {"__name__": "__main__", "read_file": read_file, "write_file": write_file}
class FileText(str):
    # The text of a file read by a dependency, also as `name.ext`.
    def __getattr__(self, attr):
        if attr == self.__dict__.get("ext"):
            return self
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")
names = given["inputs"].pop("__file_names__", {})
programs = given["inputs"].pop("__programs__", {})
scope.update(given["inputs"])
import builtins, keyword
for name, (step, ext) in names.items():
    if name.isidentifier() and not keyword.iskeyword(name) and not hasattr(builtins, name) and name not in scope and isinstance(scope.get(step), str):
        scope[name] = FileText(scope[step])
        scope[name].ext = ext
source = given["code"]
try:
    tree = ast.parse(source, "<program>")
except SyntaxError:
    tree = None
    for fixed in given["fixed"]:
        try:
            tree = ast.parse(fixed, "<program>")
            source = fixed
            break
        except SyntaxError:
            pass
    if tree is None:
        try:
            ast.parse(source, "<program>")
        except SyntaxError as e:
            text = (e.text or "").strip()
            print(f"Traceback (the program's lines):\n  line {e.lineno}: {text}\nSyntaxError: {e.msg}", file=sys.stderr)
            sys.exit(1)
del given
import importlib, io, os
# A folder is listed in name order, not the file system's own: a program run
# on a copy of the workspace (a vote, a check) lists it as the run does.
class NameOrder:
    def __init__(self, listing):
        with listing:
            self.entries = iter(sorted(listing, key=lambda entry: entry.name))
    def __iter__(self):
        return self
    def __next__(self):
        return next(self.entries)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return False
    def close(self):
        pass
listed, scanned = os.listdir, os.scandir
os.listdir = lambda path=".": sorted(listed(path))
os.scandir = lambda path=".": NameOrder(scanned(path))
MODULES = ("re", "os", "json", "math", "csv", "datetime", "statistics", "collections", "itertools", "pathlib", "sys")
# A dependency's program is run again only when it cannot change a file.
CHANGES = ("write", "remove", "unlink", "rename", "rmtree", "mkdir", "system", "subprocess", "'w'", '"w"', "'a'", '"a"', "mode=")
before = dict(scope)
made = {}
def made_by_dependency(name):
    for step, code in programs.items():
        if not isinstance(code, str) or any(c in code for c in CHANGES):
            continue
        try:
            stored = {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        except SyntaxError:
            continue
        if name not in stored:
            continue
        if step not in made:
            made[step] = quiet = dict(before)
            quiet["__builtins__"] = missing
            shown, sys.stdout = sys.stdout, io.StringIO()
            try:
                exec(compile(code, "<dependency>", "exec"), quiet)
            except BaseException:
                pass
            finally:
                sys.stdout = shown
        if made[step].get(name) is not None:
            return made[step][name]
    return None
def list_dir(path="."):
    return sorted(os.listdir(path))
def read_json(path, field=""):
    if str(path).endswith(".toml"):
        import tomllib
        with open(path, "rb") as f:
            value = tomllib.load(f)
    else:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    for key in (k for k in str(field or "").split(".") if k):
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value
def read_csv(path, column=None):
    import csv
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return rows if column is None else [row[column] for row in rows]
class Glob:
    # The glob tool as a function, and the glob module's names too.
    def __call__(self, pattern):
        import glob
        return sorted(glob.glob(pattern, recursive=True))
    def __getattr__(self, name):
        import glob
        return getattr(glob, name)
# The workspace tools a program calls as functions, as the plan calls them.
TOOLS = {"list_dir": list_dir, "read_json": read_json, "read_csv": read_csv, "glob": Glob()}
def file_named(name):
    # A file with no extension is its text by its name (`ssh_config`,
    # `VERSION`); a `name.ext` is bound only when a dependency read it.
    if not os.path.isfile(name):
        return None
    try:
        text = FileText(read_file(name))
    except (OSError, UnicodeDecodeError):
        return None
    text.ext = ""
    return text
class Missing(dict):
    # A name the program uses that neither it nor its inputs define: one of
    # the standard modules models use without an import, a workspace tool
    # called as a function, a value the program of a dependency made (the
    # plan written as a notebook), or a file of that name. Looked up only
    # when used, so a program that needs none of them starts as fast as a
    # bare one.
    def __missing__(self, name):
        if name in TOOLS:
            value = TOOLS[name]
        elif name in MODULES:
            value = importlib.import_module(name)
        else:
            value = made_by_dependency(name)
        if value is None:
            value = file_named(name)
        if value is None:
            raise KeyError(name)
        self[name] = value
        return value
missing = Missing(vars(builtins))
scope["__builtins__"] = missing
last = tree.body[-1] if tree.body else None
shown = None
if isinstance(last, ast.Expr):
    tree.body[-1] = ast.copy_location(ast.Assign(targets=[ast.Name("_value_", ast.Store())], value=last.value), last)
    shown = "_value_"
elif isinstance(last, ast.Assign) and len(last.targets) == 1 and isinstance(last.targets[0], ast.Name):
    shown = last.targets[0].id
ast.fix_missing_locations(tree)
class Written:
    def __init__(self, out):
        self.out, self.any = out, False
    def write(self, text):
        self.any = self.any or bool(text)
        return self.out.write(text)
    def __getattr__(self, name):
        return getattr(self.out, name)
HINTS = {"tomli": "tomllib reads TOML", "yaml": "there is no YAML parser: read the lines as text", "dateutil": "datetime parses dates", "requests": "urllib.request fetches URLs", "pandas": "csv reads CSV", "numpy": "statistics and math compute"}
def hint(e):
    import os
    if isinstance(e, ModuleNotFoundError):
        return "only Python's standard library is installed" + (f"; {HINTS[e.name]}" if e.name in HINTS else "")
    if isinstance(e, json.JSONDecodeError):
        return f"the text given to json is not JSON; it begins {e.doc[:80]!r}"
    if isinstance(e, NameError) and e.name:
        files = [f for f in sorted(os.listdir(".")) if f.startswith(e.name + ".")]
        if files:
            return f"{files[0]} is a file, not a variable: open({files[0]!r}).read() is its text"
    if isinstance(e, FileNotFoundError):
        return "the workspace folder has: " + ", ".join(sorted(os.listdir("."))[:20])
    if isinstance(e, ValueError) and str(e).endswith("'") and ": '" in str(e):
        return where_from(str(e).rsplit(": ", 1)[1])
    if isinstance(e, KeyError) and len(e.args) == 1 and isinstance(e.args[0], str):
        return header_of(e.args[0])
    if isinstance(e, TypeError) and text_in_arithmetic(str(e)):
        return "a value read from a file is text: convert it with float() or int() before computing or comparing with it (taking out a currency sign or a thousands separator first, if it has one)"
    if isinstance(e, IndexError):
        return "some line or field is shorter than the program expects (a blank line, a header, a comment): check the length before indexing, or skip such lines"
    if type(e).__name__ == "TOMLDecodeError" and not any(f.lower().endswith(".toml") for f in files_in_source()):
        others = files_in_source()
        return "tomllib reads only TOML (.toml files)" + (f"; {others[0]} is read as text: open({others[0]!r}, encoding='utf-8').read()" if others else "")
    if isinstance(e, AttributeError) and "'NoneType'" in str(e):
        return "a search or lookup found nothing for some line or key and gave None: check for None before using it"
    return None
def text_in_arithmetic(message):
    # A text where a number was meant: multiplied, added to a number,
    # compared with one, given to a math function. Not `"a" + 1`'s error
    # ("can only concatenate str"), which is as often a number put into text.
    import re
    return bool(re.search(r"multiply sequence by non-int of type 'str'|unsupported operand type\(s\) for .*'str'|not supported between instances of .*'str'|must be real number, not str", message))
def files_in_source():
    # The workspace files the program names in quotes, as it opens them.
    import re
    return [f for f in sorted(set(re.findall(r"['\"]([^'\"]+)['\"]", source))) if os.path.isfile(f)]
def where_from(text):
    # The line of a workspace file a value that would not convert came
    # from: a header, a unit or a label the program read as data.
    try:
        text = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    text = str(text).strip()
    if not text:
        return "an empty text was converted: skip blank lines and empty fields"
    files = files_in_source()
    for name in files[:5]:
        try:
            with open(name, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    if text in line:
                        return f"{text!r} is in {name} line {n}: {line.strip()[:120]!r}; skip the lines that are not data, or take the number out of the text"
        except OSError:
            pass
    return None
def header_of(key):
    # A column a program looked up and did not find, found in the header
    # line of a file it opens: a title or comment line above the header, or
    # names written with spaces around them, made the first line the keys.
    import re
    files = files_in_source()
    for name in files[:5]:
        try:
            with open(name, encoding="utf-8", errors="replace") as f:
                lines = [line.rstrip("\r\n") for _, line in zip(range(50), f)]
        except OSError:
            continue
        for n, line in enumerate(lines, 1):
            raw = re.split(r"[,;|\t]", line)
            if key.strip() not in [field.strip() for field in raw]:
                continue
            if n > 1:
                return f"{key!r} is a column of the header on {name} line {n}: {line.strip()[:120]!r}; the {n - 1} line(s) above it are not the header: skip them before reading the rows"
            if key not in raw:
                return f"the header of {name} writes {key.strip()!r} with spaces around it: {line.strip()[:120]!r}; strip the names and the values"
            return None
    return None
def explain(e):
    import traceback
    lines = source.splitlines()
    said = ["Traceback (the program's lines, most recent call last):"]
    for frame in [f for f in traceback.extract_tb(e.__traceback__) if f.filename == "<program>"][-4:]:
        text = lines[frame.lineno - 1].strip() if frame.lineno and 0 < frame.lineno <= len(lines) else ""
        said.append(f"  line {frame.lineno}: {text}")
    said.append(traceback.format_exception_only(type(e), e)[-1].rstrip())
    why = hint(e)
    return "\n".join(said + ([f"({why})"] if why else []))
import importlib.util, types
try:
    import tomllib
except ImportError:
    tomllib = None
def toml_key(key):
    key = str(key)
    return key if key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key) else toml_string(key)
def toml_string(text):
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")
def toml_value(value):
    import datetime, math
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, datetime.time) and value.tzinfo is not None:
        raise TypeError("TOML holds no time of day with a time zone")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"TOML holds no {type(value).__name__}")
def toml_dumps(data):
    out = []
    def is_tables(value):
        return isinstance(value, list) and value and all(isinstance(v, dict) for v in value)
    def table(path, data, header):
        plain = [(k, v) for k, v in data.items() if not isinstance(v, dict) and not is_tables(v)]
        if header and (plain or header.startswith("[[") or not data):
            out.append(header)
        out.extend(f"{toml_key(k)} = {toml_value(v)}" for k, v in plain)
        if out and out[-1]:
            out.append("")
        for k, v in data.items():
            name = path + [toml_key(k)]
            if isinstance(v, dict):
                table(name, v, "[" + ".".join(name) + "]")
            elif is_tables(v):
                for item in v:
                    table(name, item, "[[" + ".".join(name) + "]]")
    table([], data, "")
    return "\n".join(out).rstrip("\n") + "\n"
def toml_dump(data, f):
    text = toml_dumps(data)
    try:
        f.write(text)
    except TypeError:
        f.write(text.encode("utf-8"))
if tomllib is not None:
    tomllib.dump, tomllib.dumps = toml_dump, toml_dumps
if tomllib is not None and importlib.util.find_spec("toml") is None:
    def toml_load(f):
        if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
            with open(f, "rb") as opened:
                return tomllib.load(opened)
        text = f.read()
        return tomllib.loads(text if isinstance(text, str) else text.decode())
    toml = types.ModuleType("toml")
    toml.load, toml.loads, toml.TomlDecodeError = toml_load, tomllib.loads, tomllib.TOMLDecodeError
    toml.dump, toml.dumps = toml_dump, toml_dumps
    sys.modules["toml"] = toml
class Undo:
    # The workspace files and folders the program changes, as they were
    # before its first change to each: a program that fails is undone, so a
    # retry, a recovery or a revision starts from the files the step found.
    # A recovery's program renamed club.toml away and then failed, and the
    # revision after it was told the file did not exist (held-out-30).
    MOST = 8 * 1024 * 1024
    WRITES = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    def __init__(self):
        self.root = os.path.realpath(".")
        self.files, self.folders, self.busy = {}, {}, False
    def inside(self, path):
        if isinstance(path, int):
            return None
        full = os.path.realpath(os.fsdecode(path))
        return full if full.startswith(self.root + os.sep) else None
    def note(self, path):
        full = self.inside(path)
        if full is None or full in self.files or full in self.folders:
            return
        if os.path.isdir(full):
            self.folders[full] = True
            for name in os.listdir(full):
                self.note(os.path.join(full, name))
        elif not os.path.exists(full):
            self.files[full] = None
        elif os.path.isfile(full) and os.path.getsize(full) <= self.MOST:
            with open(full, "rb") as f:
                self.files[full] = f.read()
    def __call__(self, event, args):
        if self.busy:
            return
        self.busy = True
        try:
            if event == "open" and isinstance(args[2], int) and args[2] & self.WRITES:
                self.note(args[0])
            elif event in ("os.rename", "os.remove", "os.truncate", "os.rmdir", "shutil.rmtree"):
                self.note(args[0])
                if event == "os.rename":
                    self.note(args[1])
            elif event == "os.mkdir":
                full = self.inside(args[0])
                if full and not os.path.exists(full):
                    self.folders.setdefault(full, False)
        except Exception:
            pass
        finally:
            self.busy = False
    def undo(self):
        self.busy, put = True, []
        for full, kept in self.files.items():
            try:
                now = None
                if os.path.isfile(full):
                    with open(full, "rb") as f:
                        now = f.read()
                if now == kept:
                    continue
                if kept is None:
                    os.remove(full)
                else:
                    os.makedirs(os.path.dirname(full), exist_ok=True)
                    with open(full, "wb") as f:
                        f.write(kept)
                put.append(os.path.relpath(full, self.root))
            except OSError:
                pass
        for full in sorted((f for f, was in self.folders.items() if not was), key=len, reverse=True):
            try:
                os.rmdir(full)
            except OSError:
                pass
        for full in (f for f, was in self.folders.items() if was):
            os.makedirs(full, exist_ok=True)
        return sorted(put)
def failed(e):
    put = undo.undo()
    sys.stdout.flush()
    if e is not None:
        print(explain(e), file=sys.stderr)
    if put:
        print(f"(the program failed, so what it changed was put back: {', '.join(put)} as before it ran)", file=sys.stderr)
undo = Undo()
sys.addaudithook(undo)
sys.stdout = Written(sys.stdout)
try:
    exec(compile(tree, "<program>", "exec"), scope)
except KeyboardInterrupt:
    raise
except SystemExit as e:
    if e.code not in (None, 0):
        failed(None)
    raise
except BaseException as e:
    failed(e)
    sys.exit(1)
# A program may send its prints elsewhere (a head of planexec's sends
# them to a file): then it is taken to have printed.
if not getattr(sys.stdout, "any", True) and shown is not None and scope.get(shown) is not None:
    print(scope[shown])
"#;

#[derive(Clone)]
pub struct Python {
    workspace: Arc<Workspace>,
    config: ShellConfig,
    /// The interpreter to run (`python3`).
    program: String,
    /// The `PYTHONHASHSEED` programs run with ([`Python::with_hash_seed`]).
    hash_seed: u32,
}

/// Modules beyond the standard library that read a kind of file, with the
/// file extensions they read and what a program is told of them when the
/// interpreter has them. Told there was only the standard library, the
/// 1.5B model read compose files line by line, took the first `restart:`
/// (held-out-19) or `image:` line (held-out-21) rather than the named
/// service's, and two such programs agreed.
const READERS: [Reader; 1] = [Reader {
    module: "yaml",
    extensions: &["yaml", "yml"],
    note: "PyYAML is installed for reading YAML: yaml.safe_load, then take the values by their keys. To change a YAML file, do not dump it (a dump drops its comments and sorts its keys): replace the lines that change in its text and keep every other line as it is.",
}];

/// A module of [`READERS`].
struct Reader {
    module: &'static str,
    extensions: &'static [&'static str],
    note: &'static str,
}

/// The modules of [`READERS`] that `program` (`python3`) imports, asked
/// once per interpreter (with `-s`, as programs run): every copy of the
/// workspace a vote or a check runs on finds the tool again.
fn readers_installed(program: &str) -> Vec<&'static str> {
    static ASKED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<String, Vec<&'static str>>>> =
        std::sync::OnceLock::new();
    let asked = ASKED.get_or_init(Default::default);
    if let Some(known) = asked.lock().ok().and_then(|known| known.get(program).cloned()) {
        return known;
    }
    let names: Vec<&str> = READERS.iter().map(|reader| reader.module).collect();
    let probe = format!("import importlib.util as u\nfor m in {names:?}:\n    print(m if u.find_spec(m) else '')");
    let printed = std::process::Command::new(program)
        .args(["-s", "-c", &probe])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap_or_default();
    let installed: Vec<&'static str> = READERS
        .iter()
        .map(|reader| reader.module)
        .filter(|module| printed.lines().any(|line| line.trim() == *module))
        .collect();
    if let Ok(mut known) = asked.lock() {
        known.insert(program.to_string(), installed.clone());
    }
    installed
}

/// What a program for files of these `paths` is to know of the readers
/// `python3` has for them beyond the standard library, one note a line;
/// empty when it has none for them (the prompt of a task over CSV files
/// stays as it was).
pub fn readers_for<'a>(paths: impl IntoIterator<Item = &'a str>) -> String {
    let paths: Vec<&str> = paths.into_iter().collect();
    let installed = readers_installed("python3");
    let reads = |reader: &&Reader| {
        paths.iter().any(|path| {
            let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
            extension.is_some_and(|e| reader.extensions.contains(&e.as_str()))
        })
    };
    READERS
        .iter()
        .filter(|reader| installed.contains(&reader.module))
        .filter(reads)
        .map(|reader| reader.note)
        .collect::<Vec<_>>()
        .join("\n")
}

impl Python {
    /// The tool, when `program` (such as `python3`) runs on this machine.
    pub fn find(workspace: Arc<Workspace>, config: ShellConfig, program: &str) -> Option<Python> {
        let runs = std::process::Command::new(program)
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        runs.then(|| Python {
            workspace,
            config,
            program: program.to_string(),
            hash_seed: 0,
        })
    }

    /// The same tool, its programs run with another hash seed (0 unless
    /// set): a set of strings iterates in another order. A program run
    /// under two seeds that writes other content under each took its order
    /// from a set ([`crate::sandbox`] runs programs so).
    pub fn with_hash_seed(&self, seed: u32) -> Python {
        Python {
            hash_seed: seed,
            ..self.clone()
        }
    }
}

#[async_trait]
impl Tool for Python {
    fn name(&self) -> &str {
        "python"
    }
    fn description(&self) -> &str {
        "Run a short Python 3 program (standard library only) in the workspace folder and return what it prints. Use it for work on a text or a file that no other tool does in one call: to pick, filter, extract, deduplicate, number, reformat or compute with many values. The program opens the files it needs by their workspace paths (open('notes.txt'), or read_file(path) and write_file(path, content)) and print()s the result, or writes the file the task asks for. The results of the steps in its depends_on are its variables, named by their ids: s1 is the text s1 returned."
    }
    fn summary(&self) -> &str {
        "Run a Python 3 program in the workspace; returns what it prints; its depends_on results are variables s1, …"
    }
    fn parameters(&self) -> Value {
        super::args::string_args(&[(
            "code",
            "the Python 3 program; it opens files by their workspace paths and prints its result",
        )])
    }
    fn effect(&self) -> Effect {
        Effect::External
    }
    fn inputs_argument(&self) -> Option<&'static str> {
        Some("inputs")
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let code = super::args::str_arg(&args, "code")?;
        if code.trim().is_empty() {
            return Err(ToolError::invalid_args("the program is empty"));
        }
        let code = &json_escapes_restored(code);
        let inputs = args.get("inputs").cloned().unwrap_or_else(|| json!({}));
        let given = json!({"code": code, "fixed": repaired_copies(code), "inputs": inputs});
        let mut cmd = tokio::process::Command::new(&self.program);
        // Isolated, as `-I` would be (no user site, no PYTHON* variables, the
        // working folder not on the path: the launcher drops it), so a program
        // runs the same everywhere; `-I` would also ignore the one variable
        // set here. The launcher reads the rest from standard input.
        cmd.arg("-s").arg("-c").arg(LAUNCHER);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("PYTHON") {
                cmd.env_remove(name);
            }
        }
        // One hash seed (0 unless set): a set of strings iterates in the same
        // order in every run, so a run replayed does what it did. Two
        // programs whose work takes its order from a set would agree under
        // one seed alone (two dedupes by `set()` on held-out-25 and -26
        // agreed on the same wrong order), so the sandbox runs each program
        // under a second seed too and does not count one whose work changed.
        cmd.env("PYTHONHASHSEED", self.hash_seed.to_string());
        let finished = run_fed(
            cmd,
            (self.workspace.root(), Some(given.to_string().into_bytes())),
            &self.program,
            self.config.timeout,
            self.config.caps,
        )
        .await?;
        if finished.success {
            return Ok(Value::String(finished.stdout.trim_end().to_string()));
        }
        let lines: Vec<&str> = finished.said().trim_end().lines().collect();
        let tail = lines[lines.len().saturating_sub(ERROR_LINES)..].join("\n");
        Err(ToolError::failed(format!("the program failed:\n{tail}")))
    }
}

/// `code` with the backspace and form feed characters a JSON string makes
/// of `\b` and `\f` written back as those escapes: no program means the
/// control characters, and `r'\bword\b'` (a regex's word boundary) is what
/// a model wrote when its code arrives with them.
fn json_escapes_restored(code: &str) -> String {
    code.replace('\u{8}', "\\b").replace('\u{c}', "\\f")
}

/// The repaired copies of `code` the launcher runs, in order, when `code`
/// does not compile: line breaks in one-line literals written as `\n`, a
/// last `}` dropped (the JSON object's brace a model wrote into the
/// string), and both.
fn repaired_copies(code: &str) -> Vec<String> {
    let escaped = newlines_in_literals_escaped(code);
    let unbraced = |code: &str| code.trim_end().strip_suffix('}').map(str::to_string);
    let both = escaped.as_deref().and_then(unbraced);
    [escaped.clone(), unbraced(code), both].into_iter().flatten().collect()
}

/// `code` with each line break inside a one-line string literal (`'…'`,
/// `"…"`) written as `\n`; `None` when it has none. Comments, triple-quoted
/// strings and escapes are read as Python reads them.
pub fn newlines_in_literals_escaped(code: &str) -> Option<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut changed = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                out.push(chars[i]);
                i += 1;
            }
            continue;
        }
        if c != '\'' && c != '"' {
            out.push(c);
            i += 1;
            continue;
        }
        let triple = chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
        let quote: String = std::iter::repeat_n(c, if triple { 3 } else { 1 }).collect();
        out.push_str(&quote);
        i += quote.len();
        while i < chars.len() {
            let d = chars[i];
            if d == '\\' {
                out.push(d);
                if let Some(&next) = chars.get(i + 1) {
                    out.push(next);
                }
                i += 2;
                continue;
            }
            if d == c && (!triple || (chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c))) {
                out.push_str(&quote);
                i += quote.len();
                break;
            }
            if d == '\n' && !triple {
                out.push_str("\\n");
                changed = true;
            } else {
                out.push(d);
            }
            i += 1;
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python(dir: &std::path::Path) -> Option<Python> {
        Python::find(
            Arc::new(Workspace::new(dir).unwrap()),
            ShellConfig::default(),
            "python3",
        )
    }

    #[tokio::test]
    async fn a_program_reads_the_workspace_and_its_print_is_the_result() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("quotes.txt"),
            "Less is more.\nFortune favours the bold.\nNo.\n",
        )
        .unwrap();
        let Some(tool) = python(dir.path()) else {
            panic!("python3 is needed by this test (scripts/setup.sh installs it)");
        };
        let out = tool
            .call(json!({"code": "print(max(open('quotes.txt').read().splitlines(), key=len))"}))
            .await
            .unwrap();
        assert_eq!(out, json!("Fortune favours the bold."));
    }

    /// Two runs of a program that prints a set of strings print it in one
    /// order (one hash seed), and a file in the workspace named like a
    /// module does not shadow it.
    #[tokio::test]
    async fn a_set_prints_in_one_order_and_workspace_files_shadow_no_module() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("json.py"), "raise SystemExit('shadowed')\n").unwrap();
        let tool = python(dir.path()).expect("python3 is needed by this test");
        let code =
            "import json\nprint(json.dumps(list({'tent', 'stove', 'torch', 'map', 'rope', 'mug', 'saw', 'tarp'})))";
        let mut printed = Vec::new();
        for _ in 0..3 {
            printed.push(tool.call(json!({ "code": code })).await.unwrap());
        }
        assert!(printed.windows(2).all(|two| two[0] == two[1]), "{printed:?}");
    }

    /// A folder lists in name order whichever way a program lists it, so
    /// a copy of the workspace (whose file system order is its own) lists
    /// as the workspace does.
    #[tokio::test]
    async fn a_folder_lists_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("posters")).unwrap();
        let names = [
            "sunday_draft.svg",
            "a_final.pdf",
            "lineup_draft.pdf",
            "friday_draft.svg",
            "map.png",
        ];
        for name in names {
            std::fs::write(dir.path().join("posters").join(name), "x").unwrap();
        }
        let tool = python(dir.path()).expect("python3 is needed by this test");
        let listings = [
            "print(os.listdir('posters'))",
            "with os.scandir('posters') as it:\n    print([e.name for e in it])",
            "import glob\nprint([p.split('/')[-1] for p in glob.glob('posters/*')])",
            "print([p.name for p in pathlib.Path('posters').iterdir()])",
            "print(next(os.walk('posters'))[2])",
        ];
        let mut sorted = names.map(|name| format!("'{name}'"));
        sorted.sort();
        let expected = format!("[{}]", sorted.join(", "));
        for code in listings {
            let printed = tool.call(json!({ "code": code })).await.unwrap();
            assert_eq!(printed, json!(expected), "{code}");
        }
    }

    #[tokio::test]
    async fn a_result_read_from_a_file_is_also_named_by_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let tool = python(dir.path()).expect("python3");
        let names =
            json!({"name": ["s1", "txt"], "sum": ["s2", "txt"], "class": ["s1", "txt"], "my-list": ["s1", "txt"]});
        let inputs = json!({"s1": "Ada Lovelace", "s2": "3\n4", crate::tools::FILE_NAMES: names});
        let out = tool
            .call(json!({"code": "print(name.upper(), sum([1, 2]), s2.split(), name.txt == s1)", "inputs": inputs}))
            .await
            .unwrap();
        // `sum` stays the builtin; a keyword or no identifier is not bound;
        // `name.txt`, as a model writes the text of name.txt, is that text.
        assert_eq!(out, json!("ADA LOVELACE 3 ['3', '4'] True"));
        let other = tool
            .call(json!({"code": "print(name.csv)", "inputs": inputs}))
            .await
            .unwrap_err();
        assert!(other.message.contains("no attribute 'csv'"), "{}", other.message);
    }

    /// A plan written as a notebook: s2's program uses the `dates` s1's
    /// program made, and a file with no extension by its name. A program
    /// that could change a file is not run again for its names.
    #[tokio::test]
    async fn a_name_a_dependencys_program_made_or_a_file_with_no_extension_is_there() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ssh_config"), "Host db\n  Port 2222\n").unwrap();
        let tool = python(dir.path()).expect("python3");
        let made = "dates = sorted(['2026-04-02', '2026-03-30'])\nprint('not shown')";
        let writes = "dates = ['x']\nwrite_file('log.txt', 'ran')";
        let code = "print(dates[-1], re.search(r'Port (\\d+)', ssh_config).group(1))";
        let inputs = json!({"s1": "not shown", crate::tools::PROGRAMS: {"s1": made}});
        let out = tool.call(json!({"code": code, "inputs": inputs})).await.unwrap();
        assert_eq!(out, json!("2026-04-02 2222"));
        let inputs = json!({"s1": "wrote log.txt", crate::tools::PROGRAMS: {"s1": writes}});
        let error = tool.call(json!({"code": code, "inputs": inputs})).await.unwrap_err();
        assert!(
            error.message.contains("name 'dates' is not defined"),
            "{}",
            error.message
        );
        assert!(
            !dir.path().join("log.txt").exists(),
            "a program that could write a file is not run again"
        );
    }

    #[tokio::test]
    async fn the_file_tools_are_functions_of_a_program() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("chores.txt"), "water the plants\ncall the plumber\n").unwrap();
        let tool = python(dir.path()).expect("python3");
        let code = "lines = read_file('chores.txt').splitlines()\nwrite_file('numbered.txt', [f'{i}. {l}' for i, l in enumerate(lines, 1)])";
        let out = tool.call(json!({ "code": code })).await.unwrap();
        assert_eq!(out, json!("wrote numbered.txt"));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("numbered.txt")).unwrap(),
            "1. water the plants\n2. call the plumber"
        );
    }

    /// The read-only workspace tools are functions of a program by their
    /// names, with the tools' arguments; a program's own definition or
    /// import of the name is what it uses.
    #[tokio::test]
    async fn the_workspace_tools_are_functions_of_a_program_by_their_names() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pay.csv"),
            "name,amount
Ada,12.5
Bo,7
",
        )
        .unwrap();
        std::fs::write(dir.path().join("app.json"), r#"{"db": {"ports": [5432, 5433]}}"#).unwrap();
        let tool = python(dir.path()).expect("python3");
        let code = "print(list_dir('.'), sum(float(a) for a in read_csv('pay.csv', 'amount')), read_csv('pay.csv')[1]['name'], read_json('app.json', 'db.ports.1'), glob('*.csv'), glob.glob('*.json'))";
        let out = tool.call(json!({ "code": code })).await.unwrap();
        assert_eq!(
            out,
            json!("['app.json', 'pay.csv'] 19.5 Bo 5433 ['pay.csv'] ['app.json']")
        );
        let own = "def read_csv(path):\n    return 'mine'\nprint(read_csv('pay.csv'))";
        let out = tool.call(json!({ "code": own })).await.unwrap();
        assert_eq!(out, json!("mine"));
    }

    /// A value that would not convert is found in the file it came from,
    /// and a short line or a search that found nothing is said for what it
    /// is, so that the program written again handles it.
    #[tokio::test]
    async fn a_failed_conversion_says_which_line_of_which_file_it_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("meter.txt"), "Reading (kWh)\n120\n\n135\n").unwrap();
        let tool = python(dir.path()).expect("python3");
        let code = "print(sum(float(l) for l in open('meter.txt')))";
        let error = tool.call(json!({ "code": code })).await.unwrap_err();
        assert!(
            error.message.contains("'Reading (kWh)' is in meter.txt line 1"),
            "{}",
            error.message
        );
        let code = "rows = [l.split() for l in open('meter.txt')]\nprint([r[0] for r in rows])";
        let error = tool.call(json!({ "code": code })).await.unwrap_err();
        assert!(
            error.message.contains("shorter than the program expects"),
            "{}",
            error.message
        );
    }

    /// Arithmetic on a value read from a file as text says to convert it;
    /// text joined to a number (often a number put into text) does not.
    #[tokio::test]
    async fn arithmetic_on_text_read_from_a_file_says_to_convert_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("sales.csv"), "product,qty,price\nBun,3,$1.50\n").unwrap();
        let tool = python(dir.path()).expect("python3");
        let read = "import csv\nrows = list(csv.DictReader(open('sales.csv')))\n";
        for total in [
            "rows[0]['qty'] * rows[0]['price']",
            "sum(r['qty'] for r in rows)",
            "max(rows[0]['qty'], 2)",
        ] {
            let code = format!("{read}print({total})");
            let error = tool.call(json!({ "code": code })).await.unwrap_err();
            assert!(
                error.message.contains("convert it with float() or int()"),
                "{total}: {}",
                error.message
            );
        }
        let code = format!("{read}print('Total: ' + 3)");
        let error = tool.call(json!({ "code": code })).await.unwrap_err();
        assert!(!error.message.contains("convert it"), "{}", error.message);
    }

    /// A column looked up and not found is found in the header of a file
    /// the program opens: below a title line, or written with spaces.
    #[tokio::test]
    async fn a_missing_column_says_on_which_line_the_header_is() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("eps.csv"),
            "# Episode list\n# exported\nseason,title\n2,Return\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("spaced.csv"), "season, title\n2, Return\n").unwrap();
        let tool = python(dir.path()).expect("python3");
        let code = "import csv\nrows = list(csv.DictReader(open('eps.csv')))\nprint([r['season'] for r in rows])";
        let error = tool.call(json!({ "code": code })).await.unwrap_err();
        assert!(
            error
                .message
                .contains("'season' is a column of the header on eps.csv line 3")
                && error.message.contains("the 2 line(s) above it are not the header"),
            "{}",
            error.message
        );
        let code = "import csv\nrows = list(csv.DictReader(open('spaced.csv')))\nprint([r['title'] for r in rows])";
        let error = tool.call(json!({ "code": code })).await.unwrap_err();
        assert!(
            error.message.contains("writes 'title' with spaces around it"),
            "{}",
            error.message
        );
        let code = "d = {}\nprint(d['nowhere'])";
        let error = tool.call(json!({ "code": code })).await.unwrap_err();
        assert!(!error.message.contains("header"), "{}", error.message);
    }

    /// A program that fails leaves the workspace as it found it: a file it
    /// renamed away, rewrote, removed or made, and a folder it made, are as
    /// before, and its error says which it put back; one that succeeds keeps
    /// its changes.
    #[tokio::test]
    async fn a_failed_programs_changes_are_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let tool = python(dir.path()).expect("python3");
        std::fs::write(dir.path().join("club.toml"), "[a]\nx = 1\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "keep me\n").unwrap();
        let code = "import os, shutil\nos.rename('club.toml', 'club.toml.backup')\n\
                    open('notes.txt', 'a').write('more\\n')\nos.makedirs('out/deep')\n\
                    write_file('out/deep/new.txt', 'x')\nos.remove('notes.txt')\nraise ValueError('late')";
        let err = tool.call(json!({ "code": code })).await.unwrap_err();
        assert!(err.message.contains("ValueError: late"), "{}", err.message);
        assert!(
            err.message
                .contains("put back: club.toml, club.toml.backup, notes.txt, out/deep/new.txt"),
            "{}",
            err.message
        );
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["club.toml", "notes.txt"]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("club.toml")).unwrap(),
            "[a]\nx = 1\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
            "keep me\n"
        );
        let exited = tool
            .call(json!({"code": "write_file('half.txt', 'x')\nraise SystemExit('no')"}))
            .await
            .unwrap_err();
        assert!(exited.message.contains("half.txt"), "{}", exited.message);
        assert!(!dir.path().join("half.txt").exists());
        tool.call(json!({"code": "os.rename('club.toml', 'club.ini')"}))
            .await
            .unwrap();
        assert!(dir.path().join("club.ini").exists() && !dir.path().join("club.toml").exists());
    }

    #[tokio::test]
    async fn a_failed_program_says_where_and_why() {
        let dir = tempfile::tempdir().unwrap();
        let tool = python(dir.path()).expect("python3");
        let err = tool
            .call(json!({"code": "x = 1\nprint(open('missing.txt').read())"}))
            .await
            .unwrap_err();
        assert!(err.message.starts_with("the program failed:"), "{}", err.message);
        assert!(
            err.message.contains("FileNotFoundError") && err.message.contains("missing.txt"),
            "{}",
            err.message
        );
        let empty = tool.call(json!({"code": "  "})).await.unwrap_err();
        assert!(empty.message.contains("empty"), "{}", empty.message);
        // The results of the step's dependencies are variables, by step id.
        let out = tool
            .call(json!({"code": "patch = int(s1.strip().split('.')[2]) + 1\nprint(f'2.4.{patch}', n)", "inputs": {"s1": "2.4.9\n", "n": 3}}))
            .await
            .unwrap();
        assert_eq!(out, json!("2.4.10 3"));
        // A program that prints nothing returns its last line's value.
        let last = tool
            .call(json!({"code": "patch = int(s1.split('.')[2]) + 1", "inputs": {"s1": "2.4.9"}}))
            .await;
        assert_eq!(last.unwrap(), json!("10"));
        let expression = tool.call(json!({"code": "xs = [3, 1]\nsorted(xs)"})).await;
        assert_eq!(expression.unwrap(), json!("[1, 3]"));
        // A standard module named without an import is there.
        let unimported = tool
            .call(json!({"code": "print(re.sub('a', 'b', 'aa'), math.floor(2.5))"}))
            .await;
        assert_eq!(unimported.unwrap(), json!("bb 2"));
        // A program that does not compile is told where, in its own lines.
        let broken = tool.call(json!({"code": "x = 1\nprint(x +)"})).await.unwrap_err();
        assert!(
            broken.message.contains("line 2: print(x +)") && broken.message.contains("SyntaxError"),
            "{}",
            broken.message
        );
        assert!(!broken.message.contains("ast.py"), "{}", broken.message);
        // No program is no tool.
        assert!(Python::find(
            Arc::new(Workspace::new(dir.path()).unwrap()),
            ShellConfig::default(),
            "no-such-python"
        )
        .is_none());
    }

    #[tokio::test]
    async fn a_failed_programs_error_shows_its_own_lines_and_what_the_exception_means() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pod.yaml"), "kind: Pod\nspec: {}\n").unwrap();
        std::fs::write(dir.path().join("car.txt"), "34 mpg\n").unwrap();
        let tool = python(dir.path()).expect("python3");
        let failed = |code: &'static str| {
            let tool = &tool;
            async move { tool.call(json!({ "code": code })).await.unwrap_err().message }
        };
        // The program's line that failed, with its text; no launcher or
        // library frames; and what a JSON error was given.
        let json = failed("import json\nx = 1\ndata = json.load(open('pod.yaml'))").await;
        assert!(json.contains("line 3: data = json.load(open('pod.yaml'))"), "{json}");
        assert!(
            json.contains("JSONDecodeError") && json.contains("it begins 'kind: Pod"),
            "{json}"
        );
        assert!(!json.contains("decoder.py") && !json.contains("<string>"), "{json}");
        let module = failed("import no_such_module_anywhere").await;
        assert!(
            module.contains("only Python's standard library is installed"),
            "{module}"
        );
        let name = failed("print(float(car.txt))").await;
        assert!(name.contains("car.txt is a file, not a variable"), "{name}");
        let missing = failed("open('cars.txt')").await;
        assert!(
            missing.contains("the workspace folder has: car.txt, pod.yaml"),
            "{missing}"
        );
        // A line break inside a literal, escaped to run: the line shown is
        // the one of the program that ran.
        let shifted = failed("xs = ['a']\nprint('\n'.join(xs))\nprint(xs[3])").await;
        assert!(shifted.contains("line 3: print(xs[3])"), "{shifted}");
        // A text file given to tomllib: the 1.5B model, told the modules it
        // may use, loaded a tariff's prose with it (held-out-52, spent).
        let prose = failed(
            "import tomllib
t = tomllib.load(open('car.txt', 'rb'))",
        )
        .await;
        assert!(
            prose.contains("tomllib reads only TOML (.toml files); car.txt is read as text"),
            "{prose}"
        );
    }

    #[tokio::test]
    async fn tomllib_writes_toml_that_reads_back_as_the_data_it_was_given() {
        let dir = tempfile::tempdir().unwrap();
        let misting = "# unit 4\n[controller]\nname = \"Rack U4\"\nactive_hours = [6, 22]\nbar = 3.5\n\n[zones.pea_shoots]\nmist_seconds = 20\nlive = true\n\n[[alerts]]\nemail = \"a@b.example\"\n[alerts.when]\nlow = 2.0\n\n[[alerts]]\nemail = \"c@d.example\"\n";
        std::fs::write(dir.path().join("misting.toml"), misting).unwrap();
        let tool = python(dir.path()).expect("python3");
        let code = "import tomllib, toml, datetime\nd = tomllib.load(open('misting.toml', 'rb'))\nd['zones']['pea_shoots']['mist_seconds'] = 30\nd['odd key'] = {'when': datetime.date(2025, 7, 5), 'tags': ['a \"b\"'], 'n': {}}\nwith open('misting.toml', 'wb') as f:\n    tomllib.dump(d, f)\nagain = tomllib.load(open('misting.toml', 'rb'))\nprint(again == d, toml.loads(toml.dumps(d)) == d, again['zones']['pea_shoots']['mist_seconds'])";
        assert_eq!(tool.call(json!({ "code": code })).await.unwrap(), json!("True True 30"));
    }

    #[tokio::test]
    async fn import_toml_reads_toml_with_the_standard_library() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("site.toml"),
            "[[menu.main]]\nname = \"Shop\"\nweight = 20\n",
        )
        .unwrap();
        let tool = python(dir.path()).expect("python3");
        let code = "import toml\na = toml.load('site.toml')\nb = toml.load(open('site.toml'))\nprint(a == b, a['menu']['main'][0]['name'], toml.loads('x = 1'))";
        assert_eq!(
            tool.call(json!({ "code": code })).await.unwrap(),
            json!("True Shop {'x': 1}")
        );
    }

    #[tokio::test]
    async fn a_line_break_meant_as_backslash_n_in_a_literal_still_runs() {
        let dir = tempfile::tempdir().unwrap();
        let tool = python(dir.path()).expect("python3");
        // What a model writing `print('\\n'.join(xs))` in JSON often sends.
        let code = "xs = ['a', 'b']\nprint('\n'.join(xs))";
        assert_eq!(tool.call(json!({"code": code})).await.unwrap(), json!("a\nb"));
        // `\b` in JSON is a backspace; in the regex it was a word boundary.
        let words = "import re\nprint(re.findall(r'\u{8}\\d+\u{8}', 'a 12 b 3'))";
        assert_eq!(tool.call(json!({"code": words})).await.unwrap(), json!("['12', '3']"));
        // Code that compiles as written runs as written.
        let two_lines = "print('''x\ny''')";
        assert_eq!(tool.call(json!({"code": two_lines})).await.unwrap(), json!("x\ny"));
    }

    #[tokio::test]
    async fn a_json_brace_written_into_the_program_is_dropped_when_it_closes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let tool = python(dir.path()).expect("python3");
        let code = "n = 6 * 7\nprint(n)}";
        assert_eq!(tool.call(json!({ "code": code })).await.unwrap(), json!("42"));
        // Both repairs at once: a broken literal and the brace.
        let both = "print('\n'.join(['a', 'b']))}";
        assert_eq!(tool.call(json!({ "code": both })).await.unwrap(), json!("a\nb"));
        // A brace that closes a dict is the program's own.
        let dict = "d = {'a': 1}";
        assert_eq!(tool.call(json!({ "code": dict })).await.unwrap(), json!("{'a': 1}"));
    }

    #[test]
    fn only_breaks_inside_one_line_literals_are_escaped() {
        assert_eq!(
            newlines_in_literals_escaped("a = 'x\ny'\nb = 2").as_deref(),
            Some("a = 'x\\ny'\nb = 2")
        );
        assert_eq!(
            newlines_in_literals_escaped("a = '''x\ny'''\n# it's\nb = \"\\\"\""),
            None
        );
    }

    /// A program over YAML files is told of PyYAML exactly when the
    /// interpreter imports it, and one over other files is told nothing.
    #[test]
    fn a_reader_beyond_the_standard_library_is_named_only_where_installed_and_needed() {
        let imports_yaml = std::process::Command::new("python3")
            .args(["-s", "-c", "import yaml"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let note = readers_for(["notes.txt", "deploy/compose.YML"]);
        assert_eq!(note.contains("yaml.safe_load"), imports_yaml, "{note}");
        assert_eq!(readers_for(["a.yaml"]).is_empty(), !imports_yaml);
        assert!(readers_for(["sales.csv", "yaml", "README"]).is_empty());
    }
}
