"""Settings schema, YAML profiles, command-line flags and their precedence (no Spark)."""
from __future__ import annotations

import argparse
import dataclasses
import json
import pickle
import re
from pathlib import Path

import pytest

from sepne_spark import settings as schema
from sepne_spark.errors import UserError
from sepne_spark.settings import EmbedSettings, add_arguments, load_profile, resolve

CONF = Path(schema.__file__).resolve().parent.parent / "conf"
SHIPPED = ("document", "social", "yarn", "default")


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def parser(width: int = 80) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="sepne-embed",
        formatter_class=lambda prog: argparse.HelpFormatter(prog, width=width, max_help_position=width),
    )
    p.add_argument("--profile")
    add_arguments(p)
    return p


def settings_from(argv: list[str], profile: dict | None = None) -> EmbedSettings:
    return resolve(parser().parse_args(argv), profile or {})


# --- the schema --------------------------------------------------------------------


def test_the_schemas_refine_operators_are_the_spectral_modules():
    from sepne_spark import spectral

    assert schema.REFINE_OPERATORS == spectral.REFINE_OPERATORS
    assert schema._BY_NAME["refine_operator"].choices == spectral.REFINE_OPERATORS


def test_schema_fields_flags_and_defaults():
    names = [f.name for f in dataclasses.fields(EmbedSettings)]
    assert names == list(schema.SETTING_NAMES)
    assert names == [
        "metric", "window", "scaling", "dim", "landmarks", "landmark_strategy", "partition", "set_size", "lam",
        "eta", "iters", "seed", "directed", "input_format", "duplicates", "self_loops",
        "bad_lines", "lp_max_iter", "dtype", "landmark_factors", "propagation", "average_steps", "refine_steps",
        "refine_operator", "unreached", "unreached_length",
        "propagation_mu",
        "propagation_theta",
        "propagation_blocks", "propagation_dtype", "one_task_nodes", "context", "spark",
    ]
    for s in schema.SETTINGS:
        assert s.flag == "--" + s.name.replace("_", "-")
        assert s.help
    d = EmbedSettings()
    assert (d.metric, d.dim, d.landmarks, d.landmark_strategy, d.partition) == ("A+A2", 128, 200, "DD", "RP")
    assert d.scaling == "none" and d.window == 2
    assert (d.set_size, d.lam, d.eta, d.iters, d.seed, d.directed) == (500, 0.4, 0.1, 100, 0, False)
    assert (d.input_format, d.lp_max_iter, d.dtype, d.context, d.spark) == ("auto", 10, "float64", False, {})
    assert d.duplicates in ("sum", "max") and d.self_loops in ("drop", "keep") and d.bad_lines in ("fail", "skip")


def test_settings_are_frozen_validated_and_picklable():
    s = EmbedSettings(dim=16, landmarks=32, spark={"spark.a": "1"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.dim = 3  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(s)) == s
    assert dataclasses.replace(s, dim=8).dim == 8
    with pytest.raises(UserError, match=r"EmbedSettings\.dim"):
        EmbedSettings(dim=0)
    with pytest.raises(UserError, match=r"dim 300 .*larger than landmarks 200"):
        EmbedSettings(dim=300)


def test_as_dict_is_json_ready_redacts_secrets_and_round_trips():
    s = EmbedSettings(spark={"spark.hadoop.fs.s3a.secret.key": "hunter2", "spark.sql.shuffle.partitions": "8"})
    d = s.as_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["spark"]["spark.hadoop.fs.s3a.secret.key"] != "hunter2"
    assert d["spark"]["spark.sql.shuffle.partitions"] == "8"
    assert s.as_dict(redact=False)["spark"]["spark.hadoop.fs.s3a.secret.key"] == "hunter2"
    assert EmbedSettings.from_dict(s.as_dict(redact=False)) == s
    with pytest.raises(UserError, match="did you mean 'iters'"):
        EmbedSettings.from_dict({"iter": 3})


@pytest.mark.parametrize("key, secret", [
    ("spark.hadoop.fs.s3a.secret.key", True),
    ("spark.hadoop.fs.s3a.access.key", True),
    ("spark.hadoop.fs.s3a.session.token", True),
    ("spark.hadoop.fs.s3a.encryption.key", True),
    ("spark.hadoop.fs.azure.account.key.acct.blob.core.windows.net", True),
    ("spark.hadoop.fs.azure.account.oauth2.client.secret", True),
    ("spark.hadoop.fs.azure.sas.container.acct.blob.core.windows.net", True),
    ("spark.hadoop.fs.gs.auth.service.account.private.key", True),
    ("spark.hadoop.fs.gs.auth.service.account.private.key.id", True),
    ("spark.ssl.keyStorePassword", True),
    ("spark.sql.shuffle.partitions", False),
    ("spark.hadoop.fs.azure.account.auth.type", False),
    ("spark.sql.sources.partitionOverwriteMode", False),
])
def test_credentials_of_every_store_are_hidden(key, secret):
    from sepne_spark.settings import is_secret_key, redacted

    assert is_secret_key(key) is secret
    assert (redacted({key: "value"})[key] == "*********") is secret


def test_a_sites_redaction_regex_hides_more():
    from sepne_spark.settings import redacted

    conf = {"spark.redaction.regex": "(?i)secret|mycorp\\.cert", "spark.hadoop.mycorp.cert": "pem", "x": "1"}
    assert redacted(conf)["spark.hadoop.mycorp.cert"] == "*********" and redacted(conf)["x"] == "1"
    assert redacted({"spark.hadoop.mycorp.cert": "pem"}, also="mycorp")["spark.hadoop.mycorp.cert"] == "*********"
    # A Java pattern with (?i) inside (Python allows it only at the start) still applies
    assert redacted({"spark.hadoop.corp.cert": "pem"}, also="secret|(?i)CORP")["spark.hadoop.corp.cert"] == "*********"
    # A value the pattern matches (Spark applies it to values too: a JDBC URL with a password)
    url = "spark.hadoop.javax.jdo.option.ConnectionURL"
    assert redacted({url: "jdbc:mysql://h/db?password=pw"}, also="(?i)password")[url] == "*********"
    # Without a site pattern, Spark's default applies to values too, as Spark applies it
    assert redacted({"spark.jdbc.url": "jdbc:postgresql://h/db?user=u&password=p"})["spark.jdbc.url"] == "*********"
    assert redacted({"spark.jdbc.url": "jdbc:postgresql://h/db"})["spark.jdbc.url"] == "jdbc:postgresql://h/db"
    # A pattern that does not compile hides every spark.hadoop.* value rather than none
    assert redacted({"spark.hadoop.x": "1", "a": "1"}, also="(unclosed") == {"spark.hadoop.x": "*********", "a": "1"}


# --- profile validation --------------------------------------------------------------


def test_unknown_key_names_key_file_suggestion_and_valid_keys(tmp_path):
    path = write(tmp_path, "p.yaml", "landmark: 100\n")
    with pytest.raises(UserError) as err:
        load_profile(str(path))
    msg = str(err.value)
    assert "'landmark'" in msg and str(path.resolve()) in msg
    assert "did you mean 'landmarks'?" in msg
    assert "valid settings: metric, window, scaling, dim, landmarks" in msg and "set_size" in msg and "spark" in msg
    assert "\n" not in msg


@pytest.mark.parametrize(
    "key, suggestion",
    [("lambda", "(did you mean 'lam'?)"), ("set-size", "(did you mean 'set_size'?)"),
     ("landmark_stratgy", "(did you mean 'landmark_strategy'?)"),
     ("spark.executor.memory", "'spark.executor.memory' (put 'spark.executor.memory' under 'spark:')")],
)
def test_unknown_key_suggestions(tmp_path, key, suggestion):
    path = write(tmp_path, "p.yaml", f"{key}: 1\n")
    with pytest.raises(UserError, match=re.escape(suggestion)):
        load_profile(str(path))


def test_unknown_key_without_close_match_still_lists_valid_keys(tmp_path):
    path = write(tmp_path, "p.yaml", "zzzzzz: 1\n")
    with pytest.raises(UserError) as err:
        load_profile(str(path))
    assert "did you mean" not in str(err.value) and "valid settings:" in str(err.value)


@pytest.mark.parametrize(
    "text, expected",
    [
        ('dim: "128"\n', ["'dim'", "expected an integer", "'128' (str)"]),
        ("dim: true\n", ["'dim'", "expected an integer", "True (bool)"]),
        ("dim: 12.5\n", ["'dim'", "expected an integer", "12.5 (float)"]),
        ('directed: "true"\n', ["'directed'", "expected true or false", "'true' (str)"]),
        ("context: 1\n", ["'context'", "expected true or false", "1 (int)"]),
        ("lam: abc\n", ["'lam'", "expected a number", "'abc' (str)"]),
        ("eta: [1, 2]\n", ["'eta'", "expected a number", "[1, 2] (list)"]),
        ("metric: 5\n", ["'metric'", "expected one of I+A, A+A2", "5 (int)"]),
        ("dim:\n", ["'dim'", "expected an integer", "null"]),
        ("spark: 3\n", ["'spark'", "mapping", "3 (int)"]),
    ],
)
def test_wrong_type_names_key_expected_type_and_value(tmp_path, text, expected):
    path = write(tmp_path, "p.yaml", text)
    with pytest.raises(UserError) as err:
        load_profile(str(path))
    for part in expected + [str(path.resolve())]:
        assert part in str(err.value)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("dim: 0\n", ["'dim'", "an integer >= 1", "got 0"]),
        ("landmarks: -5\n", ["'landmarks'", "an integer >= 1", "got -5"]),
        ("iters: -1\n", ["'iters'", "an integer >= 0"]),
        ("eta: 0\n", ["'eta'", "a number > 0", "got 0"]),
        ("lam: -0.5\n", ["'lam'", "a number >= 0"]),
        ("lam: .inf\n", ["'lam'", "finite"]),
        ("seed: -1\n", ["'seed'", "an integer from 0 to 2^63-1"]),
        ("lp_max_iter: 0\n", ["'lp_max_iter'", ">= 1"]),
    ],
)
def test_out_of_range_names_key_and_range(tmp_path, text, expected):
    path = write(tmp_path, "p.yaml", text)
    with pytest.raises(UserError) as err:
        load_profile(str(path))
    for part in expected:
        assert part in str(err.value)


@pytest.mark.parametrize(
    "text, key, allowed",
    [
        ("metric: A+A3\n", "metric", "I+A, A+A2"),
        ("landmark_strategy: XX\n", "landmark_strategy", "DD, DP, UF, GDS"),
        ("partition: KM\n", "partition", "RP, LP, IO"),
        ("input_format: json\n", "input_format", "auto, tsv, csv, txt, parquet"),
        ("duplicates: first\n", "duplicates", "sum, max"),
        ("self_loops: remove\n", "self_loops", "drop, keep"),
        ("bad_lines: warn\n", "bad_lines", "fail, skip"),
        ("dtype: float16\n", "dtype", "float64, float32"),
    ],
)
def test_bad_choice_names_key_and_allowed_values(tmp_path, text, key, allowed):
    path = write(tmp_path, "p.yaml", text)
    with pytest.raises(UserError, match=re.escape(f"'{key}': must be one of {allowed}, got")):
        load_profile(str(path))


def test_values_are_put_in_canonical_form(tmp_path):
    path = write(
        tmp_path, "p.yaml",
        "metric: a+a2\npartition: lp\nlam: 1\neta: 1e-3\ndirected: yes\n"
        "spark:\n  spark.executor.cores: 4\n  spark.sql.adaptive.enabled: true\n  spark.x: 0.5\n",
    )
    p = load_profile(str(path))
    assert p["metric"] == "A+A2" and p["partition"] == "LP"
    assert p["lam"] == 1.0 and isinstance(p["lam"], float)
    assert p["eta"] == pytest.approx(1e-3)  # YAML 1.1 reads 1e-3 as a string
    assert p["directed"] is True
    assert p["spark"] == {"spark.executor.cores": "4", "spark.sql.adaptive.enabled": "true", "spark.x": "0.5"}


def test_spark_block_rules(tmp_path):
    assert load_profile(str(write(tmp_path, "a.yaml", "spark:\n  # nothing yet\n"))) == {"spark": {}}
    with pytest.raises(UserError, match=r"'executor.memory' is not a Spark setting: keys start with 'spark.'"):
        load_profile(str(write(tmp_path, "b.yaml", "spark:\n  executor.memory: 4g\n")))
    with pytest.raises(UserError, match=r"value of 'spark.a' must be a string"):
        load_profile(str(write(tmp_path, "c.yaml", "spark:\n  spark.a: [1]\n")))
    # Sizes Spark cannot read, or a heap it cannot start, before the JVM fails on them.
    with pytest.raises(UserError, match=r"d.yaml.*spark.driver.memory='lots' is not a heap size the driver's JVM"):
        load_profile(str(write(tmp_path, "d.yaml", "spark:\n  spark.driver.memory: lots\n")))
    for value in ("1.5g", "2 g", "4x"):
        with pytest.raises(UserError, match=r"is not a size Spark reads: a whole number and a unit"):
            load_profile(str(write(tmp_path, "e.yaml", f"spark:\n  spark.driver.maxResultSize: {value}\n")))
    for value in ("16", "449m", "460000k"):
        with pytest.raises(UserError, match=r"spark.executor.memory=.* is less than Spark starts with \(450m"):
            load_profile(str(write(tmp_path, "f.yaml", f"spark:\n  spark.executor.memory: {value}\n")))
    for value in ("4096", "4gb"):  # the driver's JVM takes -Xmx4096 as bytes, and no -Xmx4gb
        with pytest.raises(UserError, match=r"spark.driver.memory='.*' is not a heap size the driver's JVM takes"):
            load_profile(str(write(tmp_path, "h.yaml", f"spark:\n  spark.driver.memory: {value}\n")))
    ok = load_profile(str(write(tmp_path, "g.yaml", "spark:\n  spark.executor.memory: 450\n  spark.driver.memory: 4G\n"
                                                    "  spark.driver.maxResultSize: 0\n  spark.executor.memoryOverhead: 512mb\n")))
    assert ok["spark"]["spark.driver.memory"] == "4G" and ok["spark"]["spark.driver.maxResultSize"] == "0"


def test_empty_and_malformed_files(tmp_path):
    assert load_profile(str(write(tmp_path, "empty.yaml", ""))) == {}
    assert load_profile(str(write(tmp_path, "comments.yaml", "# only a comment\n"))) == {}
    with pytest.raises(UserError, match="a profile is a mapping"):
        load_profile(str(write(tmp_path, "list.yaml", "- dim\n- 3\n")))
    with pytest.raises(UserError, match=r"bad.yaml: not valid YAML: .* at line \d+, column \d+"):
        load_profile(str(write(tmp_path, "bad.yaml", "dim: 3\nlam: [1\n")))
    with pytest.raises(UserError, match=r"key 'dim' is given twice"):
        load_profile(str(write(tmp_path, "dup.yaml", "dim: 3\ndim: 4\n")))
    with pytest.raises(UserError, match=r"profile 'documnt' not found \(did you mean 'document'\?\)"):
        load_profile("documnt")
    with pytest.raises(UserError, match="not found"):
        load_profile(str(tmp_path / "missing.yaml"))


# --- extends -----------------------------------------------------------------------------


def test_extends_inherits_and_overrides(tmp_path):
    write(tmp_path, "base.yaml", "dim: 32\nlandmarks: 64\nlam: 2\nspark:\n  spark.a: '1'\n  spark.b: '2'\n")
    child = write(tmp_path, "child.yaml", "extends: base\ndim: 16\nspark:\n  spark.b: '3'\n")
    p = load_profile(str(child))
    assert p == {"dim": 16, "landmarks": 64, "lam": 2.0, "spark": {"spark.a": "1", "spark.b": "3"}}
    # a shipped profile by name, and a relative path
    assert load_profile(str(write(tmp_path, "d.yaml", "extends: document\niters: 7\n")))["iters"] == 7
    sub = tmp_path / "sub"
    sub.mkdir()
    assert load_profile(str(write(sub, "e.yaml", "extends: ../base.yaml\n")))["dim"] == 32


def test_extends_cycles_and_bad_values(tmp_path):
    write(tmp_path, "a.yaml", "extends: b\n")
    write(tmp_path, "b.yaml", "extends: a.yaml\n")
    with pytest.raises(UserError, match="cycle: .*a.yaml -> .*b.yaml -> .*a.yaml"):
        load_profile(str(tmp_path / "a.yaml"))
    with pytest.raises(UserError, match="cycle"):
        load_profile(str(write(tmp_path, "self.yaml", "extends: self\n")))
    with pytest.raises(UserError, match="'extends': expected a profile name or path, got 3"):
        load_profile(str(write(tmp_path, "n.yaml", "extends: 3\n")))
    with pytest.raises(UserError, match=r"m\.yaml: 'extends': profile 'nowhere' not found"):  # the file at fault
        load_profile(str(write(tmp_path, "m.yaml", "extends: nowhere\n")))
    # errors inside the parent name the parent's file
    write(tmp_path, "badparent.yaml", "dimm: 3\n")
    with pytest.raises(UserError, match=r"badparent\.yaml: unknown setting 'dimm'"):
        load_profile(str(write(tmp_path, "kid.yaml", "extends: badparent\n")))


def test_a_profile_that_extends_auto(tmp_path, monkeypatch):
    """``extends: auto`` (in any case, directly or through other profiles): before the
    graph is known the profile stands on the default profile, as auto does, and
    auto_extension gives what it sets over auto's choice; profiles that extend none, or a
    named profile, are not auto."""
    write(tmp_path, "cluster.yaml", "extends: AUTO\nspark:\n  spark.a: '1'\n")
    write(tmp_path, "mine.yaml", "extends: cluster\nlandmarks: 40\nspark:\n  spark.b: '2'\n")
    write(tmp_path, "fixed.yaml", "extends: social\niters: 9\n")
    monkeypatch.setenv("SEPNE_CONF_DIR", str(tmp_path))
    assert schema.auto_extension("mine") == {"landmarks": 40, "spark": {"spark.a": "1", "spark.b": "2"}}
    assert load_profile("mine") == {**load_profile("auto"), "landmarks": 40, "spark": {"spark.a": "1", "spark.b": "2"}}
    assert schema.auto_extension(str(tmp_path / "cluster.yaml")) == {"spark": {"spark.a": "1"}}
    assert schema.auto_extension("Auto") == {} and schema.auto_extension(None) is None
    for name in ("fixed", "social", "document-quality", "default"):
        assert schema.auto_extension(name) is None and not schema.is_auto(name)
    assert schema.is_auto("mine") and schema.is_auto("auto")
    # a profile's own metric wins over auto's walk window, as over a named profile's
    assert schema.extend({"metric": "A+A2", "window": 5}, {"metric": "I+A"}, "mine") == {"metric": "I+A"}
    write(tmp_path, "loop.yaml", "extends: loop2\n")
    write(tmp_path, "loop2.yaml", "extends: loop\n")
    with pytest.raises(UserError, match="cycle"):
        schema.auto_extension("loop")
    # A site's default profile over auto, directly or through another: it stands on the
    # shipped default until the graph is known (the default it hides), not on itself.
    shipped = load_profile(str(CONF / "default.yaml"))
    write(tmp_path, "default.yaml", "extends: auto\nlandmarks: 50\n")
    assert load_profile(None) == load_profile("auto") == {**shipped, "landmarks": 50}
    assert schema.auto_extension("default") == {"landmarks": 50} and schema.is_auto("default")
    assert load_profile("mine")["landmarks"] == 40 and load_profile("yarn")["landmarks"] == 50
    write(tmp_path, "default.yaml", "extends: cluster\ndim: 9\n")
    assert load_profile(None) == {**shipped, "dim": 9, "spark": {"spark.a": "1"}}
    assert load_profile("cluster") == {**shipped, "spark": {"spark.a": "1"}}  # not over the default it makes
    assert schema.auto_extension("default") == {"dim": 9, "spark": {"spark.a": "1"}}


def test_conf_dir_from_environment(tmp_path, monkeypatch):
    write(tmp_path, "mysite.yaml", "extends: social\niters: 9\n")
    write(tmp_path, "default.yaml", "landmarks: 300\n")
    monkeypatch.setenv("SEPNE_CONF_DIR", str(tmp_path))
    p = load_profile("mysite")
    assert p["iters"] == 9 and p["landmarks"] == 1000
    assert load_profile(None) == {"landmarks": 300}  # $SEPNE_CONF_DIR comes first
    assert load_profile("document")["set_size"] == 500  # shipped ones are still found
    # A site's profile of a shipped name that extends that name: the shipped one plus its changes.
    write(tmp_path, "default.yaml", "extends: default\nlandmarks: 300\n")
    write(tmp_path, "social.yaml", "extends: social\niters: 7\n")
    assert load_profile(None) == {**load_profile(str(CONF / "default.yaml")), "landmarks": 300}
    assert load_profile("social") == {**load_profile(str(CONF / "social.yaml")), "iters": 7}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    given = write(elsewhere, "default.yaml", "extends: default\ndim: 64\n")  # given by its path, in no conf folder
    assert load_profile(str(given)) == {**load_profile(None), "dim": 64}  # over the site's default, then the shipped
    write(tmp_path, "loop.yaml", "extends: loop\n")  # no other profile of that name: still a cycle
    with pytest.raises(UserError, match="cycle"):
        load_profile("loop")


# --- shipped profiles ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted({p.stem for p in CONF.glob("*.yaml")} | set(SHIPPED)))
def test_every_shipped_profile_loads_and_resolves(name):
    s = resolve({}, load_profile(name))
    assert s.dim <= s.landmarks
    assert load_profile(str(CONF / f"{name}.yaml")) == load_profile(name)


def test_shipped_profile_values():
    doc = resolve({}, load_profile("document"))
    assert (doc.metric, doc.landmarks, doc.lam, doc.eta, doc.iters, doc.dim) == ("A+A2", 200, 0.4, 0.1, 100, 128)
    assert (doc.partition, doc.set_size, doc.directed, doc.landmark_strategy) == ("RP", 500, False, "DD")
    quality = resolve({}, load_profile("document-quality"))
    assert (quality.metric, quality.window, quality.scaling, quality.eta) == ("A+A2", 5, "log", 1000.0)
    assert (quality.landmark_strategy, quality.partition, quality.landmarks) == ("GDS", "RP", 250)
    social = resolve({}, load_profile("social"))
    assert (social.metric, social.landmarks, social.lam, social.eta, social.iters) == ("I+A", 1000, 50.0, 1.0, 5)
    assert (social.dim, social.partition, social.set_size) == (128, "RP", 2000)
    assert load_profile("default") == load_profile("document") == load_profile(None)
    yarn = load_profile("yarn")
    spark = yarn.pop("spark")
    assert yarn == load_profile("auto")  # yarn extends auto: until the graph is known, the default profile
    assert schema.auto_extension("yarn") == {"spark": spark} and schema.is_auto("yarn")
    for key in ("spark.sql.shuffle.partitions", "spark.sql.adaptive.enabled",
                "spark.sql.execution.arrow.maxRecordsPerBatch", "spark.python.worker.memory",
                "spark.executor.memory", "spark.executor.cores"):
        assert key in spark
    for name in SHIPPED:  # every profile is commented
        assert (CONF / f"{name}.yaml").read_text(encoding="utf-8").lstrip().startswith("#")


# --- command line and precedence ------------------------------------------------------------


def test_flags_default_to_none():
    ns = parser().parse_args([])
    assert all(getattr(ns, name) is None for name in schema.SETTING_NAMES)


def test_precedence_default_profile_flag():
    profile = {"dim": 64, "lam": 2.0, "directed": True, "metric": "I+A"}
    s = settings_from(["--dim", "32", "--metric", "A+A2"], profile)
    assert s.dim == 32 and s.metric == "A+A2"  # flag beats profile
    assert s.lam == 2.0 and s.directed is True  # profile beats default
    assert s.eta == 0.1 and s.landmarks == 200  # default
    assert settings_from(["--undirected"], profile).directed is False
    assert settings_from(["--directed"]).directed is True
    assert settings_from([], {"context": True}).context is True
    assert settings_from(["--no-context"], {"context": True}).context is False
    # the same through a plain dict, with strings parsed as on the command line
    d = resolve({"dim": "8", "directed": "false", "input": "edges.tsv"}, profile)
    assert d.dim == 8 and d.directed is False


def test_spark_flags_merge_over_profile():
    profile = {"spark": {"spark.a": "1", "spark.b": "2"}}
    s = settings_from(["--spark", "spark.b=3", "--spark", "spark.c = x=y"], profile)
    assert s.spark == {"spark.a": "1", "spark.b": "3", "spark.c": "x=y"}


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--dim", "0"], ["argument --dim", "an integer >= 1", "got '0'"]),
        (["--dim", "abc"], ["argument --dim", "expected an integer", "'abc'"]),
        (["--eta", "0"], ["argument --eta", "a number > 0"]),
        (["--lam", "x"], ["argument --lam", "expected a number"]),
        (["--metric", "A+A3"], ["argument --metric", "must be one of I+A, A+A2"]),
        (["--set-size", "-3"], ["argument --set-size", "an integer >= 1"]),
        (["--spark", "executor.memory=4g"], ["argument --spark", "keys start with 'spark.'"]),
        (["--spark", "spark.x"], ["argument --spark", "expected KEY=VALUE"]),
        (["--directed", "--undirected"], ["--undirected", "not allowed with argument --directed"]),
    ],
)
def test_bad_command_line_value_names_the_flag(capsys, argv, expected):
    with pytest.raises(SystemExit) as exit_:
        parser().parse_args(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    for part in expected:
        assert part in err


def test_bad_value_passed_to_resolve_names_the_flag():
    with pytest.raises(UserError, match=r"argument --set-size: must be an integer >= 1, got 0"):
        resolve({"set_size": 0}, {})
    with pytest.raises(UserError, match=r"argument --landmark-strategy: must be one of DD, DP, UF, GDS"):
        resolve(argparse.Namespace(landmark_strategy="KK"), {})
    with pytest.raises(UserError, match=r"profile: unknown setting 'dimm'"):
        resolve({}, {"dimm": 3})


def test_dim_larger_than_landmarks_names_both_sources():
    with pytest.raises(UserError, match=r"dim 256 \(from --dim\) is larger than landmarks 200 \(from the profile\)"):
        settings_from(["--dim", "256"], {"landmarks": 200})


def test_window_belongs_to_a_plus_a2_only(caplog):
    assert settings_from(["--window", "4"], {}).window == 4
    with pytest.raises(UserError, match=r"window 3 \(from --window\) applies to metric A\+A2 only.*"
                                        r"metric I\+A \(from --metric\) has no window"):
        settings_from(["--window", "3", "--metric", "I+A"], {})
    with pytest.raises(UserError, match=r"window 3 \(from the profile\) applies to metric A\+A2 only.*"
                                        r"metric I\+A \(from the profile\) has no window"):
        settings_from([], {"metric": "I+A", "window": 3})
    # a flag wins with what depends on it, both ways
    with caplog.at_level("INFO", logger="sepne_spark.settings"):
        walked = settings_from(["--window", "3"], {"metric": "I+A"})
    assert (walked.metric, walked.window) == ("A+A2", 3)
    assert "--window 3 asks for walks of up to 3 steps: metric A+A2 in place of the profile's I+A" in caplog.text
    one_hop = settings_from(["--metric", "I+A"], {"metric": "A+A2", "window": 5})
    assert (one_hop.metric, one_hop.window) == ("I+A", 2)
    # before the profile is chosen (auto): only the flags' own combinations
    assert resolve({"dim": 240}, {"landmarks": 200}, provisional=True).dim == 240
    with pytest.raises(UserError, match=r"dim 240 \(from --dim\) is larger than landmarks 200 \(from --landmarks\)"):
        resolve({"dim": 240, "landmarks": 200}, {}, provisional=True)
    with pytest.raises(UserError, match=r"argument --window: must be an integer from 2 to 10, got 11"):
        resolve({"window": 11}, {})


def test_help_lists_every_setting_with_default_and_allowed_values():
    text = parser(width=400).format_help()
    lines = {line.split()[0]: line for line in text.splitlines() if line.startswith("  --")}
    for s in schema.SETTINGS:
        line = lines[s.flag]
        assert f"default: {s.default_text()}" in line, line
        if s.choices:
            assert ", ".join(s.choices) in line
        if s.negative_flag:
            assert s.negative_flag in lines
    assert "an integer >= 1; default: 128" in lines["--dim"]
    assert "default: A+A2" in lines["--metric"] and "default: false" in lines["--directed"]
    assert "--undirected" in lines
    # The job's own switches read as the settings' do
    from sepne_spark.jobs.embed import build_parser

    job = " ".join(build_parser().format_help().split())
    assert "replace an existing output (default: false)" in job and "False" not in job


def test_help_does_not_start_spark():
    with pytest.raises(SystemExit) as exit_:
        parser().parse_args(["--help"])
    assert exit_.value.code == 0


def test_small_sets_warn(caplog):
    with caplog.at_level("WARNING", logger="sepne_spark.settings"):
        resolve({"set_size": 50}, {"landmarks": 200})
    assert "set_size 50 is below landmarks 200" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="sepne_spark.settings"):
        resolve({}, load_profile("document"))
    assert caplog.text == ""


def test_a_profile_that_extends_another_wins_with_what_depends_on_it(tmp_path):
    """As a flag over a profile: a profile's own metric I+A drops the window of the
    profile it extends, and its own window makes an extended I+A into A+A2."""
    one_hop = write(tmp_path, "one_hop.yaml", "extends: document-quality\nmetric: I+A\n")
    values = load_profile(str(one_hop))
    assert values["metric"] == "I+A" and "window" not in values
    assert resolve(None, values).window == 2
    walks = write(tmp_path, "walks.yaml", "extends: social\nwindow: 3\n")
    values = load_profile(str(walks))
    assert (values["metric"], values["window"]) == ("A+A2", 3)



@pytest.mark.parametrize(
    "argv, expected",
    [(["--refine-operator", "pmi"], "--refine-operator pmi is not used: refine_steps is 0 (no refinement)"),
     (["--lp-max-iter", "5"], "--lp-max-iter 5 is not used: partition is RP, not LP"),
     (["--unreached-length", "0.5"], "--unreached-length 0.5 is not used: unreached is zero"),
     (["--propagation-mu", "0.3"], "--propagation-mu 0.3 is not used: propagation is 1 (no filter)")],
)
def test_a_flag_that_another_setting_leaves_unused_is_said(caplog, argv, expected):
    with caplog.at_level("WARNING", logger="sepne_spark.settings"):
        settings_from(argv, {})
    assert expected in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="sepne_spark.settings"):
        settings_from(argv, {"refine_steps": 2, "partition": "LP", "unreached": "anchor", "propagation": 3})
    assert "is not used" not in caplog.text


def test_a_keyword_that_another_setting_leaves_unused_is_said(caplog):
    from sepne_spark.model import SepNE

    with caplog.at_level("WARNING", logger="sepne_spark.settings"):
        SepNE.fromProfile("document", refineOperator="pmi")
    assert "refineOperator=pmi is not used: refine_steps is 0 (no refinement)" in caplog.text


def test_landmarks_given_under_auto_narrow_the_dim():
    """--landmarks K (or landmarks=K) without a dim under auto: the vectors have at most
    K dimensions, on a graph of any size (not an error after the graph is read)."""
    from sepne_spark.settings import auto_with_landmarks

    base = {"dim": 128, "landmarks": 250}
    assert auto_with_landmarks({}, base, 40) == {"dim": 40}
    assert auto_with_landmarks({"window": 4}, base, 300) == {"window": 4}
    assert auto_with_landmarks({"landmarks": 30, "dim": 30}, base, 60) == {"dim": 60}
    assert auto_with_landmarks({"landmarks": 30, "dim": 30}, base, 200) == {"dim": 128}
