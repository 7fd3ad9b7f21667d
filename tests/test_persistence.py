"""pyspark.ml persistence of SepNE and SepNEModel, alone and inside Pipelines."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from pyspark.ml import Pipeline, PipelineModel

from sepne_spark import __version__
from sepne_spark.model import SepNE, SepNEModel
from tests.helpers import jvm_log, random_graph

PARAMS = dict(dim=4, landmarks=8, metric="I+A", setSize=15, iters=5, lam=0.4, eta=0.1, seed=3)


def by_id(df) -> dict:
    return {r["id"]: r for r in df.toPandas().to_dict("records")}


def assert_same_embeddings(a, b) -> None:
    x, y = by_id(a), by_id(b)
    assert sorted(x) == sorted(y)
    scale = max(np.abs(np.asarray(r["embedding"])).max() for r in x.values())
    for node, r in x.items():
        assert r["is_landmark"] == y[node]["is_landmark"] and r["set_id"] == y[node]["set_id"]
        np.testing.assert_allclose(y[node]["embedding"], r["embedding"], rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(y[node]["context"], r["context"], rtol=0, atol=1e-9 * scale)


@pytest.fixture(scope="module")
def edges(spark):
    g = random_graph(n=40, m=150, seed=11, string_ids=True)
    return spark.createDataFrame(g.rows, "src string, dst string, weight double")


@pytest.fixture(scope="module")
def fitted(edges):
    """A PipelineModel holding one SepNEModel, fitted once for the module's tests."""
    return Pipeline(stages=[SepNE(**PARAMS)]).fit(edges)


def metadata(path) -> dict:
    files = sorted((path / "metadata").glob("part-*"))
    return json.loads(files[0].read_text().strip())


def test_estimator_saves_its_params_in_the_pyspark_ml_layout(spark, tmp_path):
    est = SepNE(**PARAMS, landmarkStrategy="GDS")
    est.save(str(tmp_path / "est"))
    meta = metadata(tmp_path / "est")
    assert meta["class"] == "sepne_spark.model.SepNE" and meta["uid"] == est.uid
    assert meta["sparkVersion"] == spark.version and meta["sepneVersion"] == __version__
    assert meta["paramMap"] == {**PARAMS, "landmarkStrategy": "GDS"}
    assert meta["defaultParamMap"]["setSize"] == 500  # the schema's default, kept apart
    loaded = SepNE.load(str(tmp_path / "est"))
    assert type(loaded) is SepNE and loaded.uid == est.uid
    assert loaded.settings() == est.settings()
    assert {p.name for p in loaded.params if loaded.isSet(p)} == set(PARAMS) | {"landmarkStrategy"}
    with pytest.raises(FileExistsError, match=r"est exists: save\(path, overwrite=True\), or write\(\)"
                                              r"\.overwrite\(\)\.save\(path\), replaces it"):
        est.save(str(tmp_path / "est"))
    est.setDim(3).write().overwrite().save(str(tmp_path / "est"))
    assert SepNE.load(str(tmp_path / "est")).getDim() == 3


def test_pipeline_and_fitted_pipeline_model_save_load_and_transform_alike(spark, tmp_path, edges, fitted):
    pipeline = Pipeline(stages=[SepNE(**PARAMS)])
    pipeline.save(str(tmp_path / "pipeline"))
    loaded_pipeline = Pipeline.load(str(tmp_path / "pipeline"))
    (stage,) = loaded_pipeline.getStages()
    assert type(stage) is SepNE and stage.uid == pipeline.getStages()[0].uid
    assert stage.settings() == pipeline.getStages()[0].settings()

    model = fitted.stages[0]
    assert isinstance(model, SepNEModel)
    fitted.save(str(tmp_path / "fitted"))
    loaded = PipelineModel.load(str(tmp_path / "fitted"))
    (loaded_model,) = loaded.stages
    assert type(loaded_model) is SepNEModel and loaded_model.uid == model.uid
    assert loaded_model.settings() == model.settings()
    assert loaded_model.landmark_ids == model.landmark_ids
    assert loaded_model.id_type == model.id_type
    for a, b in [(loaded_model.factors.Phi, model.factors.Phi), (loaded_model.factors.Psi, model.factors.Psi),
                 (loaded_model.factors.P, model.factors.P), (loaded_model.S_A, model.S_A),
                 (loaded_model.S_B, model.S_B),
                 (loaded_model.factors.singular_values, model.factors.singular_values)]:
        np.testing.assert_array_equal(a, b)
    stage_meta = metadata(next((tmp_path / "fitted" / "stages").iterdir()))
    assert stage_meta["class"] == "sepne_spark.model.SepNEModel"
    assert (stage_meta["k"], stage_meta["d"]) == (PARAMS["landmarks"], PARAMS["dim"])
    # The loaded model holds no graph: it rebuilds the blocks from the edges it is given.
    assert_same_embeddings(fitted.transform(edges), loaded.transform(edges))


def test_model_saved_in_the_0_1_layout_still_loads(spark, tmp_path, fitted):
    model = fitted.stages[0]
    path = str(tmp_path / "old")
    # The layout sepne-spark 0.1 wrote: path/model (meta, arrays, shapes), path/landmarks.
    f = model.factors
    arrays = {"Phi": f.Phi, "Psi": f.Psi, "S_A": model.S_A, "S_B": model.S_B, "singular_values": f.singular_values}
    meta = {"class": "SepNEModel", "version": "0.1.0", "params": model.settings(),
            "id_type": model.id_type.json(), "k": len(model.landmark_ids), "d": int(f.Phi.shape[0])}
    row = [(json.dumps(meta), {k: [float(x) for x in v.ravel()] for k, v in arrays.items()},
            {k: list(v.shape) for k, v in arrays.items()})]
    spark.createDataFrame(row, "meta string, arrays map<string, array<double>>, shapes map<string, array<int>>") \
        .coalesce(1).write.parquet(path + "/model")
    spark.createDataFrame([(i, j) for j, i in enumerate(model.landmark_ids)], "id string, l int") \
        .write.parquet(path + "/landmarks")
    old = SepNEModel.load(path)
    assert old.landmark_ids == model.landmark_ids and old.settings() == model.settings()
    np.testing.assert_array_equal(old.factors.P, model.factors.P)
    np.testing.assert_array_equal(old.S_B, model.S_B)
    with pytest.raises(FileNotFoundError, match="no SepNE model at .*nowhere: the path does not exist"):
        SepNEModel.load(str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="no SepNE estimator at .*nowhere: the path does not exist"):
        SepNE.load(str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("mine")
    # Refused before Spark's readers try them: they log a Java stack trace first
    with jvm_log(spark, "org.apache.spark.sql.execution.streaming.sinks.FileStreamSink") as logged:
        for folder in ("empty", "notes"):
            with pytest.raises(FileNotFoundError, match=f"no SepNE model at .*{folder}: it holds neither metadata/"):
                SepNEModel.load(str(tmp_path / folder))
            with pytest.raises(FileNotFoundError, match=f"no SepNE estimator at .*{folder}: it holds no metadata/"):
                SepNE.load(str(tmp_path / folder))
        with pytest.raises(FileNotFoundError, match="no SepNE model at .*a.txt: it is a file"):
            SepNEModel.load(str(tmp_path / "notes" / "a.txt"))
        assert "Exception" not in logged()


def test_model_saved_before_a_setting_existed_takes_its_default(spark, tmp_path, edges, fitted):
    """A model written by a release without ``averageSteps``, ``refineOperator``,
    ``unreached`` and ``unreachedLength`` (its metadata lacks the Params) loads with the
    settings' defaults, 0, transition and zero (the vectors of the releases before), and
    embeds as it did; one without the fit's record (``fit``) has none."""
    model = fitted.stages[0]
    path = tmp_path / "before"
    model.save(str(path))
    part = sorted((path / "metadata").glob("part-*"))[0]
    meta = json.loads(part.read_text().strip())
    assert meta["fit"] == model.fit_notes == {"landmark_subspaces": "M00"}  # the fit's record, saved ...
    assert SepNEModel.load(str(path)).fit_notes == model.fit_notes  # ... and loaded
    del meta["fit"]  # none before 2026-12-06
    for param in ("averageSteps", "refineOperator", "unreached", "unreachedLength"):
        assert param in meta["paramMap"] or param in meta["defaultParamMap"]
        for key in ("paramMap", "defaultParamMap"):
            meta[key].pop(param, None)
    part.write_text(json.dumps(meta) + "\n")
    (part.parent / f".{part.name}.crc").unlink(missing_ok=True)  # the checksum of the old text
    old = SepNEModel.load(str(path))
    assert old.getAverageSteps() == 0 and old.getRefineOperator() == "transition"
    assert old.getUnreached() == "zero"
    assert old.settings() == model.settings() and old.fit_notes == {}
    assert_same_embeddings(model.transform(edges), old.transform(edges))


def test_a_fitted_model_refuses_other_values_of_the_fits_params(spark, tmp_path, edges, fitted):
    """The fit fixes the landmarks, their factors and M: a model set to another dim,
    metric, reading of the graph ... would embed with arrays that do not follow it. It
    says so at transform, embed and save, and again once loaded; the solve's own
    settings stay free."""
    model = fitted.stages[0]
    path = tmp_path / "m"
    model.save(str(path))
    changes = [("dim", 2), ("landmarks", 6), ("metric", "A+A2"), ("directed", True), ("landmarkStrategy", "GDS")]
    for m in (model, SepNEModel.load(str(path))):
        for name, value in changes:
            changed = m.copy({getattr(m, name): value})
            with pytest.raises(ValueError, match=re.escape(f"set to {name}={value!r} (fitted with ")):
                changed.transform(edges)
            with pytest.raises(ValueError, match="fixed when the model is fitted"):
                changed.embed(None, edges)
            with pytest.raises(ValueError, match="fixed when the model is fitted"):
                changed.save(str(tmp_path / "other"))
    assert not (tmp_path / "other").exists()
    copied = model.copy({model.iters: 3, model.setSize: 10})
    before = dict(model.plan)
    assert copied.transform(edges).count() == 40
    assert model.plan == before and copied.plan is not model.plan  # the copy keeps its own record


def test_params_refuse_none_and_the_fit_names_the_default_dim(spark, edges):
    from sepne_spark.errors import SettingError

    with pytest.raises(SettingError, match="iters: expected an integer >= 0, got None"):
        SepNE(iters=None)
    with pytest.raises(SettingError, match="lam: expected a number >= 0, got None"):
        SepNE().setLam(None)
    # A string is no number in Python, for a decimal Param as for an integer one
    with pytest.raises(SettingError, match=r"lam: expected a number, got '0.3' \(str\)"):
        SepNE(lam="0.3")
    with pytest.raises(SettingError, match=r"iters: expected an integer, got '3' \(str\)"):
        SepNE(iters="3")
    with pytest.raises(SettingError, match=r"dim=128 \(the default\) is more than landmarks=8.*set dim to 8 or less"):
        SepNE(landmarks=8).fit(edges)
    with pytest.raises(SettingError, match="metric I[+]A has no window"):
        SepNE(metric="I+A", window=3, dim=4, landmarks=8).fit(edges)


def test_an_estimator_and_a_model_are_not_loaded_as_each_other(spark, tmp_path, fitted):
    from sepne_spark.errors import InputError, UserError

    fitted.stages[0].save(str(tmp_path / "model"))
    SepNE(**PARAMS).save(str(tmp_path / "estimator"))
    # overwrite=True replaces a saved estimator or model, and neither a file nor a folder of other data
    fitted.stages[0].save(str(tmp_path / "estimator"), overwrite=True)
    SepNE(**PARAMS).save(str(tmp_path / "estimator"), overwrite=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "part-00000.parquet").write_bytes(b"PAR1")
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="the save path .*data holds no saved model .*part-00000.parquet"):
        fitted.stages[0].save(str(tmp_path / "data"), overwrite=True)
    with pytest.raises(UserError, match="the save path .*notes.txt is a file: replacing it with a folder would"):
        SepNE(**PARAMS).save(str(tmp_path / "notes.txt"), overwrite=True)
    assert (tmp_path / "notes.txt").read_text() == "mine" and (tmp_path / "data" / "part-00000.parquet").exists()
    with pytest.raises(InputError, match="holds a fitted SepNEModel, not a SepNE: load it with SepNEModel.load"):
        SepNE.load(str(tmp_path / "model"))
    with pytest.raises(InputError, match=r"holds a SepNE estimator \(its parameters; fit it to get a model\), "
                                         "not a SepNEModel: load it with SepNE.load"):
        SepNEModel.load(str(tmp_path / "estimator"))


def test_an_unfitted_model_says_so(spark, edges, tmp_path):
    from sepne_spark.errors import SettingError

    for call in (lambda: SepNEModel().transform(edges), lambda: SepNEModel().embed(None, edges),
                 lambda: SepNEModel().save(str(tmp_path / "model"))):
        with pytest.raises(SettingError, match="holds no fitted factors: fit SepNE, or load a saved model"):
            call()
    # ... also for requested ids (it said "holds no graph", which a fitted one can too)
    with pytest.raises(SettingError, match="holds no fitted factors"):
        SepNEModel().transform(spark.createDataFrame([("1",)], "id string"))
    assert not (tmp_path / "model").exists()


def test_fit_names_the_param_for_a_graph_read_otherwise_and_embed_checks_its_arguments(spark, edges, fitted):
    from sepne_spark.errors import SettingError
    from sepne_spark.graph import prepare_graph

    directed = prepare_graph(edges, True)
    with pytest.raises(SettingError, match=re.escape(
            "the graph was read with directed=True (the estimator has False): set SepNE(directed=True) to fit it "
            "as read")):
        SepNE(**PARAMS).fit(directed)
    model = fitted.stages[0]
    with pytest.raises(TypeError, match="ids must be a DataFrame with a column id .*not a list"):
        model.embed(["a"], edges)
    with pytest.raises(SettingError, match="nodes must be the number of nodes of the graph"):
        model.embed(None, edges, nodes=-1)
    # Requested ids that cannot be taken as such: the column at fault is named
    from sepne_spark.errors import InputError

    with pytest.raises(InputError, match=re.escape("has id and src, and no dst (columns ['id', 'src']): for "
                                                   "requested ids drop src, df.drop('src')")):
        model.transform(spark.createDataFrame([("a", "b")], "id string, src string"))
    with pytest.raises(InputError, match=re.escape("the DataFrame has columns ['id']")):  # fit takes no ids
        SepNE(**PARAMS).fit(spark.createDataFrame([("a",)], "id string"))


def test_model_arrays_are_saved_as_raw_parts_and_the_one_row_layout_still_loads(spark, tmp_path, fitted,
                                                                                 monkeypatch):
    import shutil

    from sepne_spark import model as model_module

    model = fitted.stages[0]
    monkeypatch.setattr(model_module, "_PART_VALUES", 7)  # several parts per array
    path = tmp_path / "parts"
    model.save(str(path))
    data = spark.read.parquet(str(path / "data"))
    assert dict(data.dtypes)["values"] == "binary"
    assert data.where("name = 'S_A'").count() == -(-model.S_A.size // 7)
    loaded = SepNEModel.load(str(path))
    for name in ("Phi", "Psi", "singular_values"):
        np.testing.assert_array_equal(getattr(loaded.factors, name), getattr(model.factors, name))
    np.testing.assert_array_equal(loaded.S_A, model.S_A)
    np.testing.assert_array_equal(loaded.S_B, model.S_B)
    # The layout of the releases before 2026-12-04: data is one row of arrays of doubles.
    f = model.factors
    arrays = {"Phi": f.Phi, "Psi": f.Psi, "S_A": model.S_A, "S_B": model.S_B, "singular_values": f.singular_values}
    shutil.rmtree(path / "data")
    spark.createDataFrame(
        [(model.id_type.json(), {k: [float(x) for x in v.ravel()] for k, v in arrays.items()},
          {k: list(v.shape) for k, v in arrays.items()})],
        "idType string, arrays map<string, array<double>>, shapes map<string, array<int>>",
    ).coalesce(1).write.parquet(str(path / "data"))
    old = SepNEModel.load(str(path))
    np.testing.assert_array_equal(old.factors.P, model.factors.P)
    np.testing.assert_array_equal(old.S_B, model.S_B)
    assert old.landmark_ids == model.landmark_ids and old.settings() == model.settings()
