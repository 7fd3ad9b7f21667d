"""One schema: flags, estimator Params, profile keys and manifest keys agree (no Spark)."""
from __future__ import annotations

import argparse
import inspect
import re
from pathlib import Path

import pytest

from sepne_spark import graph, landmarks, partition, proximity, reading, settings
from sepne_spark.model import SepNE, SepNEModel
from sepne_spark.errors import UnknownParamError, UserError
from sepne_spark.settings import JOB, MODEL, MODEL_PARAMS, MODEL_SETTINGS, SETTINGS, EmbedSettings, SettingError

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sepne-embed", formatter_class=lambda prog: argparse.HelpFormatter(
        prog, width=400, max_help_position=400))
    settings.add_arguments(p)
    return p


def flag_error(capsys, flag: str, value: str) -> str:
    with pytest.raises(SystemExit):
        parser().parse_args([flag, value])
    return capsys.readouterr().err


def test_every_setting_has_one_scope_and_model_settings_one_param():
    for s in SETTINGS:
        assert s.scope in (MODEL, JOB)
        if s.scope == MODEL:
            first, *rest = s.name.split("_")
            assert s.param == first + "".join(w.capitalize() for w in rest)
        else:
            assert s.param is None
    assert [s.name for s in SETTINGS if s.scope == JOB] == ["input_format", "bad_lines", "context", "spark"]
    assert MODEL_PARAMS == {s.param: s.name for s in MODEL_SETTINGS}
    assert settings.setting("setSize") is settings.setting("set_size")


def test_choices_are_the_domain_modules_own():
    by = {s.name: s for s in SETTINGS}
    assert by["metric"].choices is proximity.METRICS
    assert by["scaling"].choices is proximity.SCALINGS
    assert by["window"].maximum == proximity.MAX_WINDOW
    assert by["landmark_strategy"].choices is landmarks.STRATEGIES
    assert by["partition"].choices is partition.SETUPS
    assert by["input_format"].choices is reading.FORMATS
    assert by["duplicates"].choices is graph.DUPLICATE_POLICIES
    assert by["self_loops"].choices is graph.SELF_LOOP_POLICIES
    assert by["bad_lines"].choices is reading.BAD_LINE_POLICIES


@pytest.mark.parametrize("cls", [SepNE, SepNEModel])
def test_params_are_the_model_settings_with_their_defaults_getters_and_setters(cls):
    est = cls()
    assert sorted(p.name for p in est.params) == sorted(MODEL_PARAMS)
    for s in MODEL_SETTINGS:
        param = est.getParam(s.param)
        assert est.getOrDefault(param) == s.default and not est.isSet(param)
        cap = s.param[0].upper() + s.param[1:]
        assert getattr(est, f"get{cap}")() == s.default
        assert s.help.split(",")[0].split(" --")[0] in param.doc
        if s.choices:
            value = s.choices[-1]
        elif s.type is bool:
            value = not s.default
        else:
            value = s.type(s.minimum if s.minimum is not None and not s.exclusive_minimum else s.default + 1)
        assert getattr(est, f"set{cap}")(value) is est
        assert getattr(est, f"get{cap}")() == value and est.isSet(param)


@pytest.mark.parametrize("method", ["__init__", "setParams"])
def test_keyword_only_signature_lists_every_param_with_the_schema_default(method):
    sig = inspect.signature(getattr(SepNE, method))
    params = [p for p in sig.parameters.values() if p.name != "self"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    assert [p.name for p in params] == [s.param for s in MODEL_SETTINGS]
    assert {p.name: p.default for p in params} == {s.param: s.default for s in MODEL_SETTINGS}
    with pytest.raises(TypeError):
        SepNE(16)  # positional arguments are refused


@pytest.mark.parametrize(
    "keyword, hint",
    [
        ("set_size", "(did you mean 'setSize'?)"),  # the profile key and flag word
        ("setsize", "(did you mean 'setSize'?)"),
        ("k", "(did you mean 'landmarks'?)"),  # the paper's symbol
        ("landmark", "(did you mean 'landmarks'?)"),  # a typo
        ("lp_max_iter", "(did you mean 'lpMaxIter'?)"),
        ("context", "'context' is a setting of the jobs (a flag or a profile key), not a Param of SepNE"),
        ("inputFormat", "'input_format' is a setting of the jobs (a flag or a profile key), not a Param of SepNE"),
        ("badLines", "'bad_lines' is a setting of the jobs"),
    ],
)
def test_an_unknown_keyword_names_the_param_meant(keyword, hint):
    from sepne_spark.errors import UnknownParamError

    for call in (lambda: SepNE(**{keyword: 5}), lambda: SepNE().setParams(**{keyword: 5})):
        with pytest.raises(UnknownParamError, match=re.escape(f"SepNE: unknown parameter {keyword!r}")) as exc:
            call()
        assert hint in str(exc.value) and "setSize" in str(exc.value)
        assert isinstance(exc.value, TypeError) and isinstance(exc.value, SettingError)
    with pytest.raises(UnknownParamError, match=r"unknown parameter 'zzz'; its parameters are metric, "):
        SepNE(zzz=1)


def test_flags_are_the_settings_with_the_same_defaults_and_choices():
    p = parser()
    flags: dict[str, list[str]] = {}
    for a in p._actions:
        if a.dest != "help":
            flags.setdefault(a.dest, []).extend(a.option_strings)
    assert set(flags) == {s.name for s in SETTINGS}
    lines = {ln.split()[0]: ln for ln in p.format_help().splitlines() if ln.startswith("  --")}
    for s in SETTINGS:
        assert flags[s.name] == [s.flag] + ([s.negative_flag] if s.negative_flag else [])
        assert f"default: {s.default_text()}" in lines[s.flag] or s.type is dict
        if s.choices:
            assert ", ".join(s.choices) in lines[s.flag]
        if s.type in (int, float):
            assert s.allowed() in lines[s.flag]


def test_no_profile_the_default_profile_the_estimator_and_the_manifest_agree():
    builtin = EmbedSettings()
    assert settings.resolve(None, {}) == builtin
    # The job without --profile reads conf/default.yaml: it must not contradict the schema.
    assert settings.resolve(None, settings.load_profile(None)) == builtin
    assert settings.model_params(builtin) == SepNE().settings() == SepNEModel().settings()
    manifest = builtin.as_dict()
    assert list(manifest) == [s.name for s in SETTINGS]  # manifest keys = profile keys
    assert {k: v for k, v in manifest.items() if k != "spark"} == {
        s.name: s.default for s in SETTINGS if s.type is not dict}
    assert EmbedSettings.from_dict(manifest) == builtin
    # every manifest key is a profile key
    assert settings._check_mapping(manifest, "manifest") == manifest


def _bad_values(s: settings.Setting) -> list:
    if s.choices:
        return ["nope"]
    if s.type is bool:
        return [3]
    out = []
    if s.minimum is not None:
        out.append(s.type(s.minimum) if s.exclusive_minimum else s.type(s.minimum - 1))
    if s.maximum is not None and s.maximum < 2**62:
        out.append(s.type(s.maximum + 1))
    return out


@pytest.mark.parametrize("s", [s for s in MODEL_SETTINGS if _bad_values(s)], ids=lambda s: s.name)
def test_param_flag_and_profile_refuse_the_same_values_alike(capsys, s):
    for bad in _bad_values(s):
        with pytest.raises(SettingError) as param_err:
            SepNE(**{s.param: bad})
        assert isinstance(param_err.value, ValueError) and isinstance(param_err.value, UserError)
        with pytest.raises(UserError) as profile_err:
            settings._check_mapping({s.name: bad}, "profile.yaml")
        rule = f"{s.allowed()}" if not s.choices else ", ".join(s.choices)
        assert rule in str(param_err.value) and rule in str(profile_err.value)
        assert str(param_err.value).startswith(f"{s.param}: ")
        if s.type is not bool:
            err = flag_error(capsys, s.flag, str(bad))
            assert f"argument {s.flag}" in err and rule in err
    # the values at the bounds and every choice pass all three
    goods = list(s.choices or ())
    if s.minimum is not None and not s.exclusive_minimum:
        goods.append(s.type(s.minimum))
    if s.maximum is not None and s.maximum < 2**62:
        goods.append(s.type(s.maximum))
    for good in goods:
        assert SepNE(**{s.param: good}).getOrDefault(s.param) == good
        assert settings._check_mapping({s.name: good}, "p")[s.name] == good
        assert getattr(parser().parse_args([s.flag, str(good)]), s.name) == good


def test_window_11_fails_as_a_param_as_it_does_as_a_flag(capsys):
    with pytest.raises(ValueError, match=r"window: must be an integer from 2 to 10, got 11"):
        SepNE(window=11)
    assert "argument --window: must be an integer from 2 to 10, got '11'" in flag_error(capsys, "--window", "11")
    with pytest.raises(ValueError, match="window"):
        SepNE().setWindow(11)
    with pytest.raises(ValueError, match="landmarkStrategy: must be one of DD, DP, UF, GDS"):
        SepNE().setParams(landmarkStrategy="KK")
    est = SepNE()  # pyspark.ml's set(param, value) raises the same SettingError
    with pytest.raises(SettingError, match=r"^window: must be an integer from 2 to 10, got 11$"):
        est.set(est.window, 11)


def test_an_estimator_pickles_as_pyspark_ml_ones_do():
    import pickle

    est = pickle.loads(pickle.dumps(SepNE(dim=4, metric="I+A")))
    assert est.getDim() == 4 and est.getMetric() == "I+A"
    with pytest.raises(SettingError, match="dim: must be an integer >= 1"):
        est.setDim(0)  # the converter came through


def test_params_take_the_canonical_form_and_numpy_scalars():
    import numpy as np

    est = SepNE(landmarkStrategy="gds", metric="i+a", dim=np.int64(8), lam=np.float32(0.5), eta=1)
    assert est.getLandmarkStrategy() == "GDS" and est.getMetric() == "I+A"
    assert est.getDim() == 8 and type(est.getDim()) is int
    assert est.getLam() == 0.5 and type(est.getEta()) is float
    with pytest.raises(ValueError, match="dim: expected an integer"):
        SepNE(dim=8.0)
    with pytest.raises(ValueError, match="directed: expected true or false"):
        SepNE(directed="yes")


def test_model_params_take_the_schema_defaults():
    assert settings.model_params(EmbedSettings())["setSize"] == settings._BY_NAME["set_size"].default == 500


def test_auto_profile_by_size():
    # Document-size graphs: document-quality, its window shortened only where M would be dense.
    assert settings.auto_profile(2708, 10556) == ("document-quality", {})  # Cora
    assert settings.auto_profile(2405, 35962) == ("document-quality", {})  # Wiki: 2405^2 entries at most
    assert settings.auto_profile(3000, 36000) == ("document-quality", {"window": 3})
    assert not settings.auto_needs_walks(3000, 36000)
    # Too dense for walks of 3 steps (mean degree 20): the large-graph rule, which scores
    # far higher there on validation.
    assert settings.auto_needs_walks(4000, 80000)
    two_hop = {"metric": "A+A2", "scaling": "log", "landmark_factors": "rows"}
    log_ratio_rounds = {**two_hop, "refine_operator": "pmi", "refine_steps": 64, "average_steps": 3}
    # from a mean degree of 16, one averaging step instead of three
    assert settings.auto_profile(4000, 80000, 1_600_000) == ("social", {**log_ratio_rounds, "average_steps": 1})
    assert settings.auto_profile(4000, 64000, 1_600_000) == ("social", {**log_ratio_rounds, "average_steps": 1})
    assert settings.auto_profile(4000, 63999, 1_600_000) == ("social", log_ratio_rounds)
    assert settings.auto_profile(5000, 100_000, 4 * 10**7) == ("social", {"refine_steps": 4})  # 20: hubs
    # Up to 2,449 nodes M has at most 6 x 10^6 entries whatever the density.
    assert settings.auto_profile(2400, 200_000) == ("document-quality", {})
    with pytest.raises(ValueError, match="two-step walk"):
        settings.auto_profile(4000, 80000)
    # A tiny graph: at most half its nodes as landmarks, dim at most the landmarks.
    assert settings.auto_profile(50, 200) == ("document-quality", {"landmarks": 25, "dim": 25})
    # Larger graphs: social with propagation; two-hop proximity while A^2 stays small,
    # refined by the log-ratio matrix up to 100,000 nodes (one task), by the profile's
    # transition rounds above.
    assert settings.auto_profile(10_000, 150_000, 2_400_000) == ("social", log_ratio_rounds)
    assert settings.auto_profile(100_000, 1_500_000, 2.4 * 10**7) == ("social", log_ratio_rounds)
    assert settings.auto_profile(100_001, 1_000_000, 2 * 10**7) == ("social", two_hop)
    # Otherwise social's M = I + A, its landmark subspaces from the two-step walks; with
    # hubs (degree spread above 2) 4 refinement rounds instead of 8, at every size.
    assert settings.degree_spread(4, 8, 16) == 1.0  # a 2-regular graph of 4 nodes
    assert settings.degree_spread(5, 8, 20) == pytest.approx(1.5625)  # a star of 5: degrees 4, 1, 1, 1, 1
    assert settings.auto_profile(10_000, 150_000, 10**8) == ("social", {"refine_steps": 4})  # spread 44
    # ... but up to 100,000 nodes a graph of mean degree 24 or more, whatever its spread,
    # takes 64 rounds by the log-ratio matrix and one averaging step last.
    dense = {"refine_operator": "pmi", "refine_steps": 64, "average_steps": 1}
    assert settings.auto_profile(10_000, 500_000, 4 * 10**7) == ("social", dense)  # mean degree 50, spread 1.6
    assert settings.auto_profile(10_000, 240_000, 10**8) == ("social", dense)  # 24, spread 17
    assert settings.auto_profile(10_000, 239_999, 10**8) == ("social", {"refine_steps": 4})
    assert settings.auto_profile(100_000, 2_400_000, 10**9) == ("social", {"landmarks": 2000, **dense})
    assert settings.auto_profile(100_001, 2_400_024, 10**9) == ("social", {"landmarks": 2000, "refine_steps": 4})
    assert settings.auto_profile(100_000, 2 * 10**6, 10**8) == ("social", {"landmarks": 2000, "refine_steps": 4})
    assert settings.auto_profile(100_000, 2 * 10**6, 6 * 10**7) == ("social", {"landmarks": 2000})  # spread 1.5
    assert settings.auto_profile(100_001, 2 * 10**6, 10**8) == ("social", {"landmarks": 2000, "refine_steps": 4})
    assert settings.auto_profile(300_001, 6 * 10**6, 10**9) == ("social", {"landmarks": 2000, "refine_steps": 4})
    # A directed graph: A^2's size from the walks (in-degree x out-degree), the spread
    # from the squared out-degrees (the two differ; hubs that are cited and cite).
    assert settings.auto_profile(10_000, 150_000, 10**8, 2_400_000) == ("social", {})  # A^2 too large, spread 1.07
    assert settings.auto_profile(10_000, 150_000, 2_400_000, 10**8) == ("social", log_ratio_rounds)
    assert settings.auto_profile(10_000, 150_000, 4 * 10**7, 10**8) == ("social", {"refine_steps": 4})
    assert settings.auto_profile(10**6, 1.5 * 10**7, 3 * 10**9) == ("social", {"landmarks": 2000, "refine_steps": 4})
    assert settings.auto_profile(10**6, 2.6 * 10**7, 10**9) == ("social", {"landmarks": 2000})  # spread 1.5
    assert settings.load_profile("social")["landmark_factors"] == "walks"
    with pytest.raises(ValueError, match="two-step walk"):
        settings.auto_profile(10_000, 150_000)
    resolved = settings.resolve(None, {**settings.load_profile("social"), "metric": "A+A2", "scaling": "log",
                                       "landmark_factors": "rows"})
    assert (resolved.propagation, resolved.refine_steps, resolved.window, resolved.landmarks) == (3, 8, 2, 1000)
    # Until the size is known, auto reads as the default profile.
    assert settings.load_profile("auto") == settings.load_profile(None)


def test_evaluate_reconstruct_takes_its_matrix_flags_from_the_schema():
    from sepne_spark.jobs import evaluate

    parser = evaluate.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["reconstruct"]
    flags = {a.dest: a for a in sub._actions if a.option_strings}
    for name in evaluate.MATRIX_SETTINGS:
        s = settings._BY_NAME[name]
        assert flags[name].default is None  # not given: the manifest's value, then the schema's
        for value in s.choices or ():
            ns = sub.parse_args(["--edges", "e", "--embeddings", "x", s.flag, value])
            assert getattr(ns, name) == value
        if s.choices:
            with pytest.raises(SystemExit):
                sub.parse_args(["--edges", "e", "--embeddings", "x", s.flag, "bogus"])
    with pytest.raises(SystemExit):
        sub.parse_args(["--edges", "e", "--embeddings", "x", "--window", "11"])  # the schema's bounds


@pytest.mark.parametrize(
    "function, parameter, setting",
    [
        ("graph.load_graph", "duplicates", "duplicates"), ("graph.load_graph", "self_loops", "self_loops"),
        ("graph.load_graph", "fmt", "input_format"), ("graph.load_graph", "bad_lines", "bad_lines"),
        ("graph.prepare_graph", "duplicates", "duplicates"), ("graph.prepare_graph", "self_loops", "self_loops"),
        ("reading.read_edges", "fmt", "input_format"), ("reading.read_edges", "bad_lines", "bad_lines"),
        ("landmarks.select_landmarks", "strategy", "landmark_strategy"),
        ("partition.lp_partition", "max_iter", "lp_max_iter"), ("partition.label_propagation", "max_iter", "lp_max_iter"),
        ("propagation.propagate_embeddings", "mu", "propagation_mu"),
        ("propagation.propagate_embeddings", "theta", "propagation_theta"),
        ("propagation.default_blocks", "dtype", "propagation_dtype"),
        ("propagation.propagate_embeddings", "dtype", "propagation_dtype"),
        ("spectral.propagate", "mu", "propagation_mu"), ("spectral.propagate", "theta", "propagation_theta"),
        ("sparse.sparse_proximity", "window", "window"), ("sparse.sparse_proximity", "scaling", "scaling"),
        ("set_stage.embed_sets", "dtype", "dtype"),
        ("set_stage.make_set_solver", "dtype", "dtype"), ("sparse.solve_sets", "dtype", "dtype"),
        ("sparse.embed_all", "dtype", "dtype"),
        ("landmarks.select_landmarks", "seed", "seed"), ("partition.random_partition", "seed", "seed"),
        ("partition.requested_partition", "seed", "seed"), ("partition.pack_communities", "seed", "seed"),
        ("partition.lp_partition", "seed", "seed"),
        ("one_task.embed_graph", "unreached", "unreached"),
        ("unreached.anchor_unreached", "length", "unreached_length"),
        ("propagation.propagate_embeddings", "refine_steps", "refine_steps"),
        ("propagation.propagate_embeddings", "average_steps", "average_steps"),
        ("propagation.propagate_embeddings", "refine_operator", "refine_operator"),
        ("spectral.smooth", "refine_steps", "refine_steps"), ("spectral.smooth", "average_steps", "average_steps"),
        ("spectral.smooth", "refine_operator", "refine_operator"), ("spectral.refine", "operator", "refine_operator"),
    ],
)
def test_the_library_functions_keyword_defaults_are_the_schemas(function, parameter, setting):
    import importlib

    module, name = function.rsplit(".", 1)
    f = getattr(importlib.import_module(f"sepne_spark.{module}"), name)
    assert inspect.signature(f).parameters[parameter].default == settings._BY_NAME[setting].default


def test_an_excluded_bound_is_said_as_excluded(capsys):
    """propagationTheta refuses 0: the words say so, in the Param's, the flag's and the
    help's text alike (they all come from Setting.allowed)."""
    assert settings.setting("propagation_theta").allowed() == "a number > 0 and <= 10"
    with pytest.raises(SettingError, match=r"propagationTheta: must be a number > 0 and <= 10, got 0"):
        SepNE(propagationTheta=0)
    assert "must be a number > 0 and <= 10" in flag_error(capsys, "--propagation-theta", "0")
    assert SepNE(propagationTheta=10).getPropagationTheta() == 10


def test_a_metric_flag_drops_the_profiles_window():
    """--metric I+A replaces a profile's A+A2 and with it the profile's walk window (the
    auto profile's too, chosen after the graph is read); a --window given with it is refused."""
    resolved = settings.resolve({"metric": "I+A"}, settings.load_profile("document-quality"))
    assert (resolved.metric, resolved.window) == ("I+A", 2)
    with pytest.raises(UserError, match=r"window 5 \(from --window\) applies to metric A\+A2 only"):
        settings.resolve({"metric": "I+A", "window": "5"}, settings.load_profile("document-quality"))
    with pytest.raises(UserError, match=r"window 5 \(from the profile\) applies to metric A\+A2 only"):
        settings.resolve({}, {"metric": "I+A", "window": 5})  # a profile at odds with itself


def test_from_profile_takes_a_named_profile_and_the_params_given():
    social = settings.model_params(settings.resolve(None, settings.load_profile("social")))
    assert SepNE.fromProfile("social").settings() == social
    est = SepNE.fromProfile("social", landmarks=300, setSize=800)
    assert est.settings() == {**social, "landmarks": 300, "setSize": 800}
    # metric I+A replaces the profile's A+A2 and drops its walk window, as --metric I+A does.
    quality = SepNE.fromProfile("document-quality")
    assert (quality.getMetric(), quality.getWindow()) == ("A+A2", 5)
    plain = SepNE.fromProfile("document-quality", metric="I+A")
    assert (plain.getMetric(), plain.getWindow(), plain.getLandmarks()) == ("I+A", 2, quality.getLandmarks())
    # and a window above 2 makes the profile's I+A into A+A2, as --window does
    walks = SepNE.fromProfile("social", window=3)
    assert (walks.getMetric(), walks.getWindow(), walks.getLandmarks()) == ("A+A2", 3, social["landmarks"])
    # Values are checked as SepNE(...) checks them, with the Param's name.
    with pytest.raises(SettingError, match="window"):
        SepNE.fromProfile("social", window=11)
    with pytest.raises(UnknownParamError, match="setSize"):
        SepNE.fromProfile("social", set_size=800)
    with pytest.raises(UserError, match="profile"):
        SepNE.fromProfile("no-such-profile")
    with pytest.raises(SettingError, match="chosen from the graph's size"):
        SepNE.fromProfile("auto")
    with pytest.raises(SettingError, match="chosen from the graph's size"):
        SepNE.fromProfile()


def test_from_profile_checks_settings_that_go_together_at_the_call(caplog):
    with pytest.raises(SettingError, match=r"dim 300 \(given\) is larger than landmarks 250 \(from the profile\)"):
        SepNE.fromProfile("document-quality", dim=300)
    with pytest.raises(SettingError, match="window 5 .*applies to metric A\\+A2 only"):
        SepNE.fromProfile("document-quality", metric="I+A", window=5)
    with caplog.at_level("WARNING", logger="sepne_spark"):
        SepNE.fromProfile("document-quality", setSize=100)
    assert "set_size 100 is below landmarks 250" in caplog.text


def test_readme_settings_reference_is_the_schemas():
    """README's settings reference is the table the schema makes: every setting, with its
    flag, Param, default and the two profiles auto chooses between. After a change of a
    setting run ``python scripts/settings_reference.py``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("settings_reference", ROOT / "scripts" / "settings_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert module.with_table(readme) == readme, "README's settings reference is out of date: run scripts/settings_reference.py"
    table = readme.partition(module.START)[2].partition(module.END)[0]
    for s in settings.SETTINGS:
        assert f"| `{s.name}` | `{s.flag}`" in table


@pytest.mark.unit
def test_the_log_ratio_tier_ends_where_the_propagation_leaves_one_task():
    """auto refines by the log-ratio matrix up to the propagation's one-task bound, as
    AUTO_LOG_RATIO_NODES documents: the two constants are one number."""
    from sepne_spark.propagation import ONE_TASK_NODES

    assert settings.AUTO_LOG_RATIO_NODES == ONE_TASK_NODES


def test_a_zipped_wheels_profile_is_named_by_its_place_in_the_wheel(tmp_path):
    """Imported from a zip file (a wheel on ``spark-submit --py-files``), the profiles are
    read from a temporary copy that ends with the process: a run's manifest names the
    profile inside the wheel instead, a path that still means something after the run."""
    import os
    import subprocess
    import sys
    import zipfile

    root = Path(__file__).resolve().parent.parent
    whl = tmp_path / "sepne_spark-0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        for path in sorted((root / "sepne_spark").rglob("*.py")):
            z.write(path, path.relative_to(root).as_posix())
        for path in sorted((root / "conf").glob("*.yaml")):
            z.write(path, f"sepne_spark/profiles/{path.name}")
    code = ("import sepne_spark, sys; from sepne_spark import settings; "
            "assert sepne_spark.__file__.startswith(sys.argv[1]), sepne_spark.__file__; "
            "print(settings.profile_label('yarn')); print(settings.find_profile('yarn'))")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SEPNE_CONF_DIR")}
    proc = subprocess.run([sys.executable, "-c", code, str(whl)], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(env, PYTHONPATH=str(whl)), timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    label, copy = proc.stdout.split()
    assert label == f"{whl}/sepne_spark/profiles/yarn.yaml"
    assert "sepne-profiles-" in copy and not Path(copy).exists()  # the copy went with its process


@pytest.mark.parametrize("metric, window", [("I+A", 2), ("A+A2", 2), ("A+A2", 3), ("A+A2", 5)])
def test_the_metric_as_summaries_print_it_is_in_the_words_of_its_flags(metric, window):
    """The summary's and the log's words for M (``A+A2, window 3``) are values the flags
    take: a user who copies them gets the same M."""
    from sepne_spark.jobs.embed import build_parser

    words = proximity.metric_text(metric, window).split(", window ")
    ns = build_parser().parse_args(["--metric", words[0], *(["--window", words[1]] if len(words) > 1 else [])])
    assert (ns.metric, ns.window if len(words) > 1 else window) == (metric, window)
