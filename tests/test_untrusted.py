"""Issue 34: a pull request controls the specs, their names, symbolic links beside them and the repository's
configuration. Nothing it says makes align read outside the repository, hang, or end in an internal error
(docs/ci.md, "Security"); each test here is an attack that worked before."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, unquote_to_bytes

import pytest

from align.span import visible

from .conftest import SPECS
from .test_config import _main  # the command line in-process: (exit code, stdout, stderr)

PROVED = SPECS / "freegap" / "example1_laplace.dp"
SECRET = "s3cr3t-t0ken-for-align"
CLIMB = "../" * 40


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "specs").mkdir()
    shutil.copy(PROVED, root / "specs" / "proved.dp")
    monkeypatch.chdir(root)
    monkeypatch.setenv("SECRET_TOKEN", SECRET)
    return root


def _outputs(*argv: str) -> tuple[int, str]:
    """Every format of `argv`: the exit codes must agree; stdout and stderr of each, joined."""
    codes, texts = set(), []
    for fmt in ("text", "concise", "json", "sarif", "github"):
        code, out, err = _main(*argv, "--output-format", fmt)
        codes.add(code)
        texts.append(out + err)
    assert len(codes) == 1, codes
    return codes.pop(), "\n".join(texts)


# --------------------------------------------------------------------------- nothing read outside the repository

@pytest.mark.parametrize("config", ["pyproject.toml", "align.toml"])
@pytest.mark.parametrize(("target", "secret"), [("proc/self/environ", SECRET), ("etc/passwd", "root:")])
def test_a_configured_glob_never_climbs_out_of_the_repository(repo: Path, config: str, target: str, secret: str):
    table = "[tool.align]\n" if config == "pyproject.toml" else ""
    (repo / config).write_text(f'{table}paths = ["specs/*.dp", "{CLIMB}{target}"]\n')
    code, text = _outputs("verify")
    assert code == 2 and secret not in text
    assert "error[config-value]" in text and "`..` leaves the configuration's folder" in text
    assert f"{config}:{2 if table else 1}:1" in text  # located at the key


@pytest.mark.parametrize("pattern", ["/etc/passwd", "/proc/self/environ", "~/x.dp", "specs/../../x.dp"])
def test_an_absolute_or_climbing_glob_is_refused(repo: Path, pattern: str):
    (repo / "align.toml").write_text(f'paths = ["{pattern}"]\n')
    code, text = _outputs("verify")
    assert code == 2 and "error[config-value]" in text and SECRET not in text and "root:" not in text


def test_a_committed_symlink_out_of_the_repository_is_refused_without_its_content(repo: Path):
    (repo / "specs" / "leak.dp").symlink_to("/etc/passwd")
    (repo / "specs" / "env.dp").symlink_to("/proc/self/environ")
    # as the documented workflow names them: `align verify $(git ls-files '*.dp')`
    for name in ("specs/leak.dp", "specs/env.dp"):
        code, text = _outputs("verify", name)
        assert code == 2 and "root:" not in text and SECRET not in text, text
        assert "error[outside-repository]" in text and f"{name} is a symbolic link out of the repository" in text
    # through a linked folder too, and from any working directory inside the repository
    (repo / "specs" / "etc").symlink_to("/etc")
    os.chdir(repo / "specs")
    code, text = _outputs("verify", "etc/passwd")
    assert code == 2 and "root:" not in text and "error[outside-repository]" in text
    # and by the configured paths: the glob itself is refused
    os.chdir(repo)
    (repo / "align.toml").write_text('paths = ["specs/*.dp"]\n')
    code, text = _outputs("verify")
    assert code == 2 and "root:" not in text and SECRET not in text
    assert "a symbolic link out of the configuration's folder" in text


def test_a_symlink_inside_the_repository_and_a_file_named_outside_it_are_read(repo: Path, tmp_path: Path):
    (repo / "specs" / "alias.dp").symlink_to("proved.dp")
    assert _main("verify", "specs/alias.dp")[0] == 0
    outside = tmp_path / "elsewhere.dp"
    shutil.copy(PROVED, outside)
    assert _main("verify", str(outside))[0] == 0  # the user's choice
    assert _main("verify", "../elsewhere.dp")[0] == 0


def test_a_file_that_is_not_text_is_refused_without_an_excerpt(repo: Path):
    # named on the command line (the user's choice), /proc/self/environ holds NUL bytes: not a spec, not shown
    code, text = _outputs("check", "/proc/self/environ")
    assert code == 2 and SECRET not in text and "error[io-error]" in text and "holds a NUL byte" in text
    (repo / "specs" / "binary.dp").write_bytes(b"mechanism m() {\n  secret-line \x00 more\n}\n")
    code, _, err = _main("check", "specs/binary.dp")
    assert code == 2 and "specs/binary.dp:2:15: error[io-error]" in err and "secret-line" not in err
    (repo / "specs" / "latin1.dp").write_bytes(b"# secret-line caf\xe9\n")
    code, _out, err = _main("check", "specs/latin1.dp")
    assert code == 2 and "specs/latin1.dp:1:18: error[io-error]" in err and "secret-line" not in err


# --------------------------------------------------------------------------------------------- bounded globs

@pytest.mark.slow
@pytest.mark.parametrize("pattern", ["specs/**/*.dp", "specs/" + "*/" * 25 + "*.dp"])
def test_symlink_loops_end_at_once(repo: Path, pattern: str):
    # pathlib follows a link to a folder in each `*` component: 3^25 paths, expanded and sorted by every command
    for name in ("l1", "l2", "l3"):
        (repo / "specs" / name).symlink_to(".")
    (repo / "align.toml").write_text(f'paths = ["{pattern}"]\n')
    env = {**os.environ, "NO_COLOR": "1"}
    for argv in (["explain", "usage"], ["verify", "--output-format", "concise"]):
        done = subprocess.run([sys.executable, "-m", "align", *argv], cwd=repo, capture_output=True, text=True,
                              timeout=120, env=env)
        if argv[0] == "explain" or "**" in pattern:
            assert done.returncode == 0, done.stderr
    if "**" in pattern:  # no link to a folder is followed: the spec once, not once per path through the links
        assert done.stdout.splitlines() == [line for line in done.stdout.splitlines()
                                            if line.startswith("specs/proved.dp:")] and done.stdout
    else:
        assert done.returncode == 2 and "which matches none" in done.stdout + done.stderr, done.stdout + done.stderr


def test_only_the_commands_that_use_paths_expand_them(repo: Path):
    (repo / "align.toml").write_text('paths = ["nothing/*.dp"]\n')
    code, out, _ = _main("explain", "usage")
    assert code == 0 and out
    assert _main("check", "specs/proved.dp")[0] == 0
    code, text = _outputs("verify")
    assert code == 2 and "`nothing/*.dp`, which matches none" in text


@pytest.mark.parametrize(("limit", "value", "make", "message"), [
    ("MAX_GLOB_MATCHES", 5, lambda r: [(r / "specs" / f"s{i}.dp").write_text("") for i in range(6)],
     "it matches more than 5 files"),
    ("MAX_GLOB_DEPTH", 3, lambda r: (r / "specs" / "a" / "b" / "c" / "d").mkdir(parents=True),
     "it reaches more than 3 folders deep"),
    ("MAX_GLOB_ENTRIES", 10, lambda r: [(r / "specs" / f"f{i}.txt").write_text("") for i in range(12)],
     "it examines more than 10 directory entries"),
])
def test_globs_are_bounded(repo: Path, monkeypatch: pytest.MonkeyPatch, limit: str, value: int, make, message: str):
    import align.files

    monkeypatch.setattr(align.files, limit, value)
    make(repo)
    (repo / "align.toml").write_text('paths = ["specs/**/*.dp"]\n')
    code, text = _outputs("verify")
    assert code == 2 and "error[config-value]" in text and message in text, text


def test_a_glob_that_reaches_a_special_file_is_refused(repo: Path):
    os.mkfifo(repo / "specs" / "pipe.dp")
    (repo / "align.toml").write_text('paths = ["specs/*.dp"]\n')
    code, text = _outputs("verify")
    assert code == 2 and "it matches specs/pipe.dp, a FIFO (named pipe), not a regular file" in text
    (repo / "specs" / "pipe.dp").unlink()
    (repo / "specs" / "zero.dp").symlink_to("/dev/zero")
    code, text = _outputs("verify")
    assert code == 2 and "specs/zero.dp, a symbolic link out of the configuration's folder" in text


# ------------------------------------------------------------------------------- malformed configuration

@pytest.mark.parametrize(("text", "code", "message"), [
    ('paths = ["/abs/*.dp"]\n', "config-value", "an absolute path"),
    ('paths = ["."]\n', "config-value", "it names no file"),
    ('paths = ["./"]\n', "config-value", "it names no file"),
    ('paths = ["specs/a**b.dp"]\n', "config-value", "`**` must be a whole path component"),
    ('paths = ["specs/**"]\n', "config-value", "names folders, not files"),
    (f'paths = ["{"x" * 300}/*.dp"]\n', "config-value", "longer than 255 bytes"),
    ("timeout = inf\n", "config-value", "not float inf"),
    ("timeout = nan\n", "config-value", "not float nan"),
    ("timeout = 1e308\n", "config-value", "at most 86400"),
    ("max-length = 99999999999999999999999\n", "config-", ""),
    ("a = " + "[" * 5000 + "]" * 5000 + "\n", "config-syntax", "nested too deeply"),
    ("output-format = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n", "config-syntax", "nested too deeply"),
])
def test_every_malformed_configuration_is_a_located_config_diagnostic(repo: Path, text: str, code: str, message: str):
    (repo / "align.toml").write_text(text)
    for argv in (["verify"], ["explain", "usage"], ["check", "specs/proved.dp"]):
        status, out, err = _main(*argv, "--output-format", "json")
        assert status == 2 and "internal-error" not in out + err, (argv, out, err)
        (diagnostic,) = json.loads(out)["files"][0]["diagnostics"] if argv[0] != "explain" else \
            json.loads(out)["diagnostics"]
        assert diagnostic["code"].startswith(code) and message in diagnostic["message"], diagnostic
        assert diagnostic["span"] is not None and diagnostic["span"]["path"] == "align.toml"


def test_a_configuration_that_is_not_text_or_too_large_is_a_diagnostic(repo: Path):
    (repo / "align.toml").write_bytes(b'paths = ["specs/*.dp"]\n# secret-line caf\xe9\n')
    code, _, err = _main("verify")
    assert code == 2 and "align.toml:2:18: error[config-file]" in err and "secret-line" not in err
    assert "byte 0xe9 is not UTF-8" in err
    (repo / "align.toml").write_bytes(b"# " + b"x" * (1024 * 1024 + 10) + b"\n")
    code, _, err = _main("verify")
    assert code == 2 and "align.toml:1:1: error[config-file]" in err and "larger than 1048576 bytes" in err
    (repo / "align.toml").unlink()
    (repo / "align.toml").symlink_to("/etc/passwd")
    code, _, err = _main("explain", "usage")
    assert code == 2 and "align.toml:1:1: error[config-file]" in err and "a symbolic link out of the repository" in err
    assert "root:" not in err


# ------------------------------------------------------------------------ nothing injected into CI logs

REFUTED = SPECS / "incorrect" / "histogram_lap_eps.dp"
BROKEN_SVT = SPECS / "incorrect" / "svt_gap_outputs_noisy_query.dp"  # its sampled alignment check fails
HOSTILE_NAMES = [
    "::warning::INJECTED.dp",
    "::stop-commands::TOKEN.dp",
    "a\n::error file=x.dp,line=1::FORGED.dp",
    "b\r::error::FORGED\x1b[2J\x1b]0;title\x07.dp",
    " ::notice::lead.dp",
    "##[warning]old-form.dp",
    "c%0A::error::percent,comma:colon.dp",
    "d\u2028e\u202ertl.dp",
]
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
GITHUB_COMMAND = re.compile(r"::(error|warning) ([^:]*)::(.*)")


def _unescape(text: str) -> str:
    return re.sub("%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), text)


def _log_safe(text: str, fmt: str) -> None:
    """What a terminal or GitHub's runner would act on: a control character, a line that is a workflow command
    (`::` after blanks, or `##[` anywhere), except the github format's own annotations."""
    assert not CONTROL.search(text), (fmt, CONTROL.search(text))
    assert "##[" not in text, fmt
    for line in text.split("\n"):
        if line.lstrip().startswith("::"):
            assert fmt == "github" and GITHUB_COMMAND.fullmatch(line), (fmt, line)
        if fmt == "github" and line:
            assert line.startswith(("::error ", "::warning ", "align: ")), line


# Each name runs every output format as a program: the fast tier keeps the first.
@pytest.mark.parametrize("name", [pytest.param(name, id=str(k), marks=() if k == 0 else pytest.mark.slow)
                                  for k, name in enumerate(HOSTILE_NAMES)])
def test_hostile_file_names_forge_no_workflow_command_and_no_terminal_control(repo: Path, name: str):
    shutil.copy(REFUTED, repo / "specs" / name)
    broken = "broken-" + name
    (repo / "specs" / broken).write_text("mechanism m(q: real {\n")
    for argv in (["verify", f"specs/{name}", f"specs/{broken}"], ["check", f"specs/{name}", f"specs/{broken}"]):
        for fmt in ("text", "concise", "github", "sarif", "json"):
            code, out, err = _main(*argv, "--output-format", fmt)
            results = out if fmt != "sarif" else json.dumps(json.loads(out)["runs"][0]["results"])
            assert code in (1, 2) and "internal-error" not in err + results
            if fmt in ("text", "concise", "github"):
                _log_safe(out, fmt)
                _log_safe(err, fmt)
            if fmt == "github":  # the annotation lands on the file: its property is the name, escaped
                files = {_unescape(dict(p.split("=", 1) for p in m.group(2).split(","))["file"])
                         for m in map(GITHUB_COMMAND.fullmatch, out.splitlines()) if m}
                assert files == ({visible(f"specs/{name}"), visible(f"specs/{broken}")} if argv[0] == "verify"
                                 else {visible(f"specs/{broken}")})
            if fmt == "sarif":
                uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
                        for result in json.loads(out)["runs"][0]["results"] for loc in result["locations"]}
                assert all(re.fullmatch(r"[A-Za-z0-9\-._~/%]+", uri) for uri in uris), uris
                assert {unquote(uri) for uri in uris} <= {f"specs/{name}", f"specs/{broken}"}
    for argv in (["run", f"specs/{name}", "--samples", "10", "--arg", "q=[1,2]", "--arg", "eps=1"],
                 ["test", f"specs/{broken}"]):
        for fmt in ("text", "concise"):
            code, out, err = _main(*argv, "--output-format", fmt)
            assert code in (0, 2) and "internal-error" not in out + err, err
            _log_safe(out, fmt)
            _log_safe(err, fmt)


def test_sarif_uris_are_percent_encoded_and_keep_the_name(repo: Path):
    from align.render.sarif import artifact_location as located

    def artifact_location(path: str) -> dict:
        return located(path, repo)

    assert artifact_location("specs/a b<c>.dp") == {"uri": "specs/a%20b%3Cc%3E.dp", "uriBaseId": "%SRCROOT%"}
    assert artifact_location("specs/back\\slash.dp")["uri"] == "specs/back%5Cslash.dp"
    assert artifact_location("specs/line\nbreak.dp")["uri"] == "specs/line%0Abreak.dp"
    assert artifact_location(os.fsdecode(b"specs/caf\xe9.dp"))["uri"] == "specs/caf%E9.dp"
    assert artifact_location("specs/x:y.dp")["uri"] == "specs/x%3Ay.dp"  # never read as a scheme
    assert artifact_location("/abs/d i r/x.dp") == {"uri": "file:///abs/d%20i%20r/x.dp"}
    assert artifact_location(str(repo / "specs" / "x y.dp")) == {"uri": "specs/x%20y.dp", "uriBaseId": "%SRCROOT%"}
    assert unquote_to_bytes(artifact_location(os.fsdecode(b"specs/\xff\xfe.dp"))["uri"]) == b"specs/\xff\xfe.dp"


# ------------------------------------------------------------------------ nothing written outside the repository

def _outputs_to(target: str) -> list[list[str]]:
    """Each command that writes a file the user names, writing to `target`."""
    return [["verify", "specs/refuted.dp", "--counterexample", target],
            ["report", "specs/proved.dp", "-o", target, "--format", "md"],
            ["test", "specs/proved.dp", "--samples", "2000", "--confirm", "0", "--no-exact", "--plot", target],
            ["run", "specs/broken_svt.dp", "--arg", "q=[0.5, 2, 1]", "--arg", "T=1", "--arg", "k=1", "--arg", "eps=1",
             "--arg", "theta=1/2", "--check-alignment", "--neighbour", "q=[1.5, 2, 1]", "--samples", "2000",
             "--counterexample-out", target]]


@pytest.mark.slow
def test_an_output_named_through_a_link_out_of_the_repository_is_refused(repo: Path, tmp_path: Path):
    shutil.copy(REFUTED, repo / "specs" / "refuted.dp")
    shutil.copy(BROKEN_SVT, repo / "specs" / "broken_svt.dp")
    canary = tmp_path / "canary.txt"
    canary.write_text(SECRET)
    (repo / "out.png").symlink_to(canary)          # a committed link to a file outside
    (repo / "new.png").symlink_to(tmp_path / "new.png")  # a dangling one: it would create the file
    (repo / "up").symlink_to(tmp_path)             # a linked folder
    for target in ("out.png", "new.png", "up/x.png"):
        for argv in _outputs_to(target):
            code, out, err = _main(*argv)
            assert code == 2 and "error[write-error]" in err, (argv, out, err)
            assert "a symbolic link out of the repository" in err
            assert canary.read_text() == SECRET and not (tmp_path / "new.png").exists()
            assert not (tmp_path / "x.png").exists()


@pytest.mark.slow
def test_an_output_that_is_a_fifo_without_a_reader_fails_at_once(repo: Path):
    shutil.copy(REFUTED, repo / "specs" / "refuted.dp")
    shutil.copy(BROKEN_SVT, repo / "specs" / "broken_svt.dp")
    os.mkfifo(repo / "pipe.png")
    env = {**os.environ, "NO_COLOR": "1"}
    for argv in _outputs_to("pipe.png"):
        done = subprocess.run([sys.executable, "-m", "align", *argv], cwd=repo, capture_output=True, text=True,
                              timeout=300, env=env)
        assert done.returncode == 2 and "error[write-error]" in done.stderr, (argv, done.stderr)


@pytest.mark.parametrize("text", ['"\\u001b[2Jkey" = 1\n', '"a\\n::warning::b" = 1\n', "x." * 2000 + "y = 1\n",
                                  "[" + "t." * 2000 + "u]\nk = 1\n"])
def test_a_key_that_cannot_be_found_as_written_is_still_located_and_escaped(repo: Path, text: str):
    (repo / "align.toml").write_text(text)
    code, out, err = _main("explain", "usage")
    assert code == 2 and "error[config-unknown-key]" in err and err.startswith("align.toml:1:1:"), err
    _log_safe(out + err, "text")


def test_a_link_that_loops_matches_nothing_and_named_is_an_io_error(repo: Path):
    (repo / "specs" / "self.dp").symlink_to("self.dp")
    (repo / "specs" / "a.dp").symlink_to("b.dp")
    (repo / "specs" / "b.dp").symlink_to("a.dp")
    (repo / "align.toml").write_text('paths = ["specs/*.dp"]\n')
    code, out, err = _main("verify", "--output-format", "concise")
    assert code == 0 and out.startswith("specs/proved.dp:") and len(out.splitlines()) == 1, out + err
    code, _, err = _main("verify", "specs/self.dp")
    assert code == 2 and "error[io-error]" in err and "internal" not in err
