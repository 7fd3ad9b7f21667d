"""Dense n x d matrices and sparse n x n operators as DataFrames of node blocks.

The propagation stage multiplies a sparse matrix (the graph) by dense n x d matrices
(the embeddings) a few times. Done as one Spark row per product term, each product
would shuffle one d-vector per edge; here the nodes are split instead into ``blocks``
row blocks (by a seeded hash of the id) and each block into chunks of
:data:`CHUNK_ROWS` consecutive rows, and

* a dense matrix is a DataFrame of chunks ``(b, c, name, rows, cols, data)``: chunk ``c``
  of block ``b`` holds rows ``c * CHUNK_ROWS ..`` of that block as ``rows x cols``
  little-endian float64 (or float32) bytes, so several matrices of the same nodes
  (``name``) live in one table;
* the sparse operator is stored once, by (row block, column block, row chunk), as
  packed COO arrays (row in the chunk, row of the column in its block, value), plus the
  list of column chunks each row block reads (``demand``);
* a product runs in two partition-wise stages. First every pair (row block, column
  block) multiplies its part of the operator by the column block's chunks that it
  reads (``scipy.sparse`` in ``groupBy(rb, cb).applyInPandas``, in the storage type)
  and emits its partial sums by row chunk; then every row chunk adds its
  partial sums and a NumPy function updates the chunk's own rows of the state (the
  recurrences of :mod:`sepne_spark.spectral`, all of them row-wise). A task holds at
  most one block's rows of one matrix, whatever the graph's size; a product moves about
  ``2 x blocks x n x cols`` values on a graph without locality, far less on one whose
  blocks follow its communities.

Nothing of size n reaches the driver: products, sums and d x d Gram matrices are all
computed in partition-wise stages; a Gram matrix (d x d, as at most
:data:`GRAM_GROUPS` partial sums) is the one result collected,
and the d x d factors made from it travel back in the next stage's closure. A product
that is followed by a Gram matrix of its result (:meth:`BlockGraph.product_with_gram`)
forms each chunk's part of it in the task that computes the chunk, so that the n x d
result is not read a second time for it. Every
intermediate table is computed when it is built and cut from its lineage by a local
checkpoint (on the executors' disks), so a chain of products plans in constant time
and each product runs once. (A lazy local checkpoint would not make the chain lazy: it
still runs the broadcasts of its plan when it is built.)
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import pandas as pd
import scipy.sparse as sp
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from sepne_spark.partition import hash_seed
from sepne_spark.session import checkpoint

log = logging.getLogger(__name__)

#: Rows of one chunk of a dense block matrix (4,096 x 128 float64 = 4 MiB).
CHUNK_ROWS = 4096

#: Bytes of one Arrow batch between the JVM and a block's Python task. Spark cuts
#: batches at 10,000 records by default, and a record here is a chunk of MiBs: a row
#: block of 500,000 nodes would travel as one batch of GiBs, built in the JVM's heap.
ARROW_BATCH_BYTES = 64 * 1024 * 1024
_ARROW_BATCH_KEY = "spark.sql.execution.arrow.maxBytesPerBatch"

CHUNK_SCHEMA = StructType(
    [
        StructField("b", IntegerType(), False),
        StructField("c", IntegerType(), False),
        StructField("name", StringType(), False),
        StructField("rows", IntegerType(), False),
        StructField("cols", IntegerType(), False),
        StructField("data", BinaryType(), False),
    ]
)
_PARTS_SCHEMA = StructType(
    [
        StructField("rb", IntegerType(), False),
        StructField("kind", IntegerType(), False),
        StructField("cb", IntegerType(), False),
        StructField("c", IntegerType(), False),
        StructField("name", StringType(), True),
        StructField("rows", IntegerType(), False),
        StructField("cols", IntegerType(), False),
        StructField("data", BinaryType(), False),
    ]
)
_ENTRIES, _SHIPPED, _OWN, _PARTIAL = 0, 1, 2, 3
#: Name of the rows that hold a chunk's part of a Gram matrix (``rows = cols = d``,
#: float64) in a table that :meth:`BlockGraph.product_with_gram` returns from; never a
#: matrix of the state.
_GRAM = "~gram"

#: ``update(product, own) -> new own``: ``product`` is a row chunk's rows of S @ X,
#: ``own`` the chunk's rows of every matrix by name (each ``rows x cols``); returns the
#: matrices the chunk keeps (those not returned are dropped). It must work row by row:
#: a product calls it once per row chunk.
Update = Callable[[np.ndarray, Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]


def bound_arrow_batches(spark: SparkSession) -> None:
    """Cap the session's Arrow batches at :data:`ARROW_BATCH_BYTES` unless a smaller
    cap is set already (a runtime SQL setting, allowed on shared clusters and Spark
    Connect); logged when changed."""
    try:
        current = int(str(spark.conf.get(_ARROW_BATCH_KEY, str(2**31 - 1))).rstrip("bB"))
    except ValueError:  # a size with a unit ("64m"): set by someone on purpose, kept
        return
    if current > ARROW_BATCH_BYTES:
        spark.conf.set(_ARROW_BATCH_KEY, str(ARROW_BATCH_BYTES))
        log.info("%s set to %d (was %d): block chunks are MiBs each", _ARROW_BATCH_KEY, ARROW_BATCH_BYTES, current)


def _checkpoint(df: DataFrame) -> DataFrame:
    """``df`` computed once and cut from its lineage (:func:`sepne_spark.session.checkpoint`),
    on disk (the executors' local disks under a local master):
    the tables here hold n x d matrices, which in memory would take the room the
    products' sorts need (and fail them with ``UNABLE_TO_ACQUIRE_MEMORY`` at 10^6 nodes)."""
    return checkpoint(df, StorageLevel.DISK_ONLY)


def _as_bytes(a: np.ndarray, dtype: str) -> bytes:
    return np.ascontiguousarray(a, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()


def _chunk_view(data: bytes, rows: int, cols: int) -> np.ndarray:
    """The chunk's values as a read-only view of ``data`` (no copy)."""
    itemsize = len(data) // max(rows * cols, 1) if rows * cols else 8
    dt = np.dtype("<f8") if itemsize == 8 else np.dtype("<f4")
    return np.frombuffer(data, dtype=dt).reshape(rows, cols)


def _chunk_array(data: bytes, rows: int, cols: int) -> np.ndarray:
    return _chunk_view(data, rows, cols).astype(np.float64)


def _stacked(datas, rows, cols, dtype: str = "float64") -> np.ndarray:
    """The chunks stacked in order into one matrix of ``dtype`` (float64 unless asked),
    filled in place: one copy of the values, not one per chunk plus one for the stack."""
    rows = [int(r) for r in rows]
    cols = [int(k) for k in cols]
    out = np.empty((sum(rows), cols[0] if cols else 0), dtype=dtype)
    at = 0
    for data, r, k in zip(datas, rows, cols):
        out[at:at + r] = _chunk_view(data, r, k)
        at += r
    return out


def _columns(ship_pdf: pd.DataFrame, dtype: str, cr: int, where: str) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """The shipped column chunks of one pair of blocks (sorted by chunk), stacked into
    one matrix of ``dtype``, and the function from the stored entries' columns (their
    rows in the column block) to rows of that matrix; a column whose chunk was not
    shipped is an error naming ``where``."""
    X = _stacked(ship_pdf["data"], ship_pdf["rows"], ship_pdf["cols"], dtype)
    chunks = ship_pdf["c"].to_numpy(np.int64)
    starts = np.concatenate([[0], np.cumsum(ship_pdf["rows"].to_numpy(np.int64))[:-1]])

    def locate(ci: np.ndarray) -> np.ndarray:
        at = np.searchsorted(chunks, ci // cr)
        if np.any(at >= len(chunks)) or np.any(chunks[np.minimum(at, len(chunks) - 1)] != ci // cr):
            raise RuntimeError(f"{where}: a column chunk the entries read was not shipped")
        return starts[at] + ci % cr

    return X, locate


def _rows_frame(rows: list[tuple]) -> pd.DataFrame:
    names = [f.name for f in CHUNK_SCHEMA.fields]
    if not rows:
        return pd.DataFrame({n: pd.Series([], dtype=object) for n in names})
    return pd.DataFrame(rows, columns=names)


def _block_matrices(pdf: pd.DataFrame) -> dict[str, np.ndarray]:
    """The full row-block matrices held as chunk rows in ``pdf`` (one block), by name."""
    out: dict[str, np.ndarray] = {}
    for name, grp in pdf.groupby("name", sort=True):
        grp = grp.sort_values("c")
        out[str(name)] = _stacked(grp["data"], grp["rows"], grp["cols"])
    return out


def _emitted(b: int, c: int, new: Mapping[str, np.ndarray], dtype: str, gram: str | None) -> pd.DataFrame:
    """Chunk rows of the matrices ``new`` of chunk ``c`` of block ``b``, stored in
    ``dtype``; with ``gram``, one more row (:data:`_GRAM`) holding X^T X of that matrix
    as stored (its values after the rounding to ``dtype``), in float64."""
    rows = []
    for name in sorted(new):
        X = np.asarray(new[name], dtype=np.float64)
        data = _as_bytes(X, dtype)
        rows.append((b, c, name, int(X.shape[0]), int(X.shape[1]), data))
        if name == gram:
            Xs = _chunk_array(data, int(X.shape[0]), int(X.shape[1]))
            G = Xs.T @ Xs
            rows.append((b, c, _GRAM, int(G.shape[0]), int(G.shape[1]), _as_bytes(G, "float64")))
    if gram is not None and gram not in new:
        raise ValueError(f"the update returned no matrix {gram!r} to form the Gram matrix of")
    return _rows_frame(rows)


@dataclass
class BlockGraph:
    """A sparse n x n operator S by row block, and the node index it is stored under.

    Attributes
    ----------
    index : DataFrame
        ``(id, b, i)``: block ``b`` and row ``i`` in that block of every node.
    entries : DataFrame
        ``(rb, cb, c, data)``: the entries of row chunk ``c`` of row block ``rb`` in the
        columns of block ``cb``, as packed COO arrays (row in the chunk and row of the
        column in block ``cb`` int32, value float64).
    demand : DataFrame
        ``(rb, cb, c)``: the column chunks (block ``cb``, chunk ``c``) row block ``rb``
        reads.
    blocks : int
        Number of row blocks.
    dtype : str
        Type the dense chunks and the products' partial sums are stored and shipped in
        (``float64`` or ``float32``: half the bytes, about 1e-7 relative error per
        stored value). The sparse products by pair of blocks run in this type too (a
        float32 chunk is multiplied as it is stored, without a float64 copy); the sums
        of the partial products and the updates run in float64.
    """

    index: DataFrame
    entries: DataFrame
    demand: DataFrame
    blocks: int
    dtype: str = "float64"
    chunk_rows: int = CHUNK_ROWS

    @classmethod
    def build(
        cls,
        nodes: DataFrame,
        entries: DataFrame,
        blocks: int,
        seed: int = 0,
        dtype: str = "float64",
        chunk_rows: int | None = None,
    ) -> "BlockGraph":
        """Index ``nodes`` (column ``id``) into ``blocks`` row blocks and store ``entries``
        (``src, dst, value``: S[src, dst] = value; repeated pairs are added) by block.

        Every ``src`` and ``dst`` must be a node. One shuffle numbers the nodes of each
        block (by id), two joins key the entries, one groups them by row chunk and
        column block.
        """
        if blocks < 1:
            raise ValueError(f"blocks must be >= 1; got {blocks}")
        bound_arrow_batches(nodes.sparkSession)
        cr = int(chunk_rows or CHUNK_ROWS)
        block_of = F.pmod(F.xxhash64(F.col("id").cast("string"), F.lit(hash_seed(seed, 104729))),
                          F.lit(blocks)).cast("int")
        keyed = nodes.select("id").distinct().select("id", block_of.alias("b"))
        w = Window.partitionBy("b").orderBy("id")
        index = _checkpoint(keyed.select("id", "b", (F.row_number().over(w) - 1).cast("int").alias("i")))
        stored, demand = _stored(index, entries, cr)
        return cls(index=index, entries=stored, demand=demand, blocks=blocks, dtype=dtype, chunk_rows=cr)

    def reweighted(self, entries: DataFrame) -> "BlockGraph":
        """Another sparse operator on the same nodes, stored under this graph's index:
        ``entries`` (``src, dst, value``, as in :meth:`build`). Dense matrices of this
        graph (:meth:`to_chunks`, the states of :meth:`product`) are matrices of the new
        one too, so products by the two operators can alternate on one state."""
        stored, demand = _stored(self.index, entries, self.chunk_rows)
        return BlockGraph(index=self.index, entries=stored, demand=demand, blocks=self.blocks,
                          dtype=self.dtype, chunk_rows=self.chunk_rows)

    # -- dense matrices ------------------------------------------------------------------
    def to_chunks(self, df: DataFrame, column: str, name: str) -> DataFrame:
        """The dense matrix whose row for node ``id`` is the array ``column`` of ``df``
        (every indexed node must have one row), as chunks named ``name``."""
        dtype, cr = self.dtype, self.chunk_rows
        # A fresh attribute for the id: ``df`` may come from the nodes the index was built
        # from, and a join of two plans over the same attributes fails to resolve.
        # Every indexed node, with its row or none (a node without one is named, wherever
        # it falls in its chunk); a node given two rows makes a chunk too long.
        rows = self.index.join(df.select(F.col("id").alias("id"), F.col(column).alias("x")), "id", "left")
        chunk = (F.col("i") / F.lit(cr)).cast("int")

        def build(pdf: pd.DataFrame) -> pd.DataFrame:
            pdf = pdf.sort_values("i")
            b, c = int(pdf["b"].iloc[0]), int(pdf["i"].iloc[0]) // cr
            missing = pdf["x"].isna()
            if missing.any():
                raise ValueError(f"block {b}, chunk {c}: missing rows ({int(missing.sum())} of {len(pdf)} nodes "
                                 f"have none, e.g. node {pdf['id'][missing].iloc[0]})")
            if pdf["i"].iloc[-1] - pdf["i"].iloc[0] + 1 != len(pdf):
                raise ValueError(f"block {b}, chunk {c}: repeated rows ({len(pdf)} rows for nodes "
                                 f"{pdf['i'].iloc[0]}..{pdf['i'].iloc[-1]})")
            block = np.vstack(pdf["x"].to_numpy()).astype(np.float64)
            return _rows_frame([(b, c, name, int(block.shape[0]), int(block.shape[1]), _as_bytes(block, dtype))])

        return _checkpoint(rows.groupBy("b", chunk.alias("chunk")).applyInPandas(build, schema=CHUNK_SCHEMA))

    def from_chunks(self, chunks: DataFrame, name: str, column: str = "embedding",
                    right: np.ndarray | None = None) -> DataFrame:
        """``(id, column)`` rows of matrix ``name`` (an array of doubles per node), or of
        ``name @ right`` when a (small, ``cols x d'``) matrix ``right`` is given: it
        travels in the task's closure, and the product runs chunk by chunk as the rows
        are read (lazy, like the rest of this frame)."""
        cr = self.chunk_rows
        R = None if right is None else np.array(right, dtype=np.float64)
        out_schema = StructType(
            [StructField("b", IntegerType(), False), StructField("i", IntegerType(), False),
             StructField(column, ArrayType(DoubleType(), False), False)]
        )

        def explode(batches):
            for pdf in batches:
                for b, c, r, k, data in zip(pdf["b"], pdf["c"], pdf["rows"], pdf["cols"], pdf["data"]):
                    block = _chunk_array(data, int(r), int(k))
                    if R is not None:
                        block = block @ R
                    yield pd.DataFrame({
                        "b": np.full(int(r), int(b), dtype=np.int32),
                        "i": (int(c) * cr + np.arange(int(r))).astype(np.int32),
                        column: list(block),
                    })

        rows = chunks.where(F.col("name") == name).mapInPandas(explode, schema=out_schema)
        return rows.join(self.index, ["b", "i"]).select("id", column)

    def row_sums(self, name: str) -> DataFrame:
        """The n x 1 matrix of S's row sums, as chunks named ``name``."""
        dtype, cr = self.dtype, self.chunk_rows
        own = self.index.select(F.col("b").alias("rb"), (F.col("i") / F.lit(cr)).cast("int").alias("c"),
                                F.col("i")).groupBy("rb", "c").agg(F.count(F.lit(1)).alias("n"))
        parts = self.entries.join(own, ["rb", "c"], "right")
        out_schema = CHUNK_SCHEMA

        def sums(pdf: pd.DataFrame) -> pd.DataFrame:
            total = np.zeros((int(pdf["n"].iloc[0]), 1))
            pdf = pdf.sort_values("cb")  # a fixed order of the column blocks' sums
            for data in pdf["data"]:
                if data is not None:
                    r, _, v = _unpack(data)
                    np.add.at(total[:, 0], r, v)
            return _rows_frame([(int(pdf["rb"].iloc[0]), int(pdf["c"].iloc[0]), name, len(total), 1,
                                 _as_bytes(total, dtype))])

        return _checkpoint(parts.groupBy("rb", "c").applyInPandas(sums, schema=out_schema))

    # -- products ------------------------------------------------------------------------
    def product(self, state: DataFrame, ship: str, update: Update) -> DataFrame:
        """One sparse product and update, for every row chunk at once.

        Every row chunk computes ``Y = S[chunk, :] @ X`` with ``X`` the matrix ``ship``
        of ``state``, then ``update(Y, own)`` with ``own`` its rows of every matrix in
        ``state``; the result is the new state (chunks of what ``update`` returned).

        Two shuffles: the shipped column chunks meet the operator's entries by (row
        block, column block), where ``scipy.sparse`` forms the partial sums; the partial
        sums meet the state's own chunks by row chunk, where they are added (in column
        block order, so the result does not depend on the run) and ``update`` runs.
        """
        return self._product(state, ship, update)

    def _shipped(self, state: DataFrame, ship: str) -> DataFrame:
        """The column chunks of matrix ``ship`` of ``state``, each to every row block
        whose entries read it (by ``demand``), and the stored entries, in one table
        ``(rb, kind, cb, c, name, rows, cols, data)`` for a ``groupBy(rb, cb)``."""
        shipped = (
            state.where(F.col("name") == ship)
            .select(F.col("b").alias("cb"), "c", "rows", "cols", "data")
            .join(self.demand, ["cb", "c"])
            .select("rb", F.lit(_SHIPPED).alias("kind"), "cb", "c", F.lit(ship).alias("name"), "rows", "cols", "data")
        )
        stored = self.entries.select("rb", F.lit(_ENTRIES).alias("kind"), "cb", "c",
                                     F.lit(None).cast("string").alias("name"), F.lit(0).alias("rows"),
                                     F.lit(0).alias("cols"), "data")
        return stored.unionByName(shipped)

    def _product(self, state: DataFrame, ship: str, update: Update, gram: str | None = None) -> DataFrame:
        dtype, cr = self.dtype, self.chunk_rows
        head = ["rb", "kind", "cb", "c", "name", "rows", "cols", "data"]

        def partial(pdf: pd.DataFrame) -> pd.DataFrame:
            rb, cb = int(pdf["rb"].iloc[0]), int(pdf["cb"].iloc[0])
            kind = pdf["kind"].to_numpy()
            ent = pdf[kind == _ENTRIES]
            ship_pdf = pdf[kind == _SHIPPED].sort_values("c")
            if ent.empty:
                return pd.DataFrame({k: pd.Series([], dtype=object) for k in head})
            # In the storage type: float32 chunks are multiplied as they are stored (half
            # the memory traffic of a float64 copy, and no copy to make); float64 as before.
            X, locate = _columns(ship_pdf, dtype, cr, f"row block {rb}, column block {cb}")
            rows: list[tuple] = []
            for c, data in sorted(zip(ent["c"].astype(int), ent["data"]), key=lambda t: t[0]):
                r, ci, v = _unpack(data)
                n = int(r.max()) + 1
                S = sp.csr_matrix((v.astype(X.dtype, copy=False), (r, locate(ci))), shape=(n, X.shape[0]))
                Y = np.asarray(S @ X)
                rows.append((rb, _PARTIAL, cb, int(c), ship, n, int(Y.shape[1]), _as_bytes(Y, dtype)))
            return pd.DataFrame(rows, columns=head)

        partials = self._shipped(state, ship).groupBy("rb", "cb").applyInPandas(partial, schema=_PARTS_SCHEMA)
        own = state.select(F.col("b").alias("rb"), F.lit(_OWN).alias("kind"), F.lit(-1).alias("cb"), "c",
                           "name", "rows", "cols", "data")

        def run(pdf: pd.DataFrame) -> pd.DataFrame:
            rb, c = int(pdf["rb"].iloc[0]), int(pdf["c"].iloc[0])
            kind = pdf["kind"].to_numpy()
            own_pdf = pdf[kind == _OWN]
            if own_pdf.empty:
                return _rows_frame([])
            mats = _block_matrices(own_pdf)
            n = next(iter(mats.values())).shape[0]
            parts = pdf[kind == _PARTIAL].sort_values("cb")
            cols = int(mats[ship].shape[1]) if ship in mats else (int(parts["cols"].iloc[0]) if len(parts) else 1)
            Y = np.zeros((n, cols))
            for data, r, k in zip(parts["data"], parts["rows"], parts["cols"]):
                Y[:int(r)] += _chunk_view(data, int(r), int(k))
            return _emitted(rb, c, update(Y, mats), dtype, gram)

        return _checkpoint(partials.unionByName(own).groupBy("rb", "c").applyInPandas(run, schema=CHUNK_SCHEMA))

    def product_with_gram(self, state: DataFrame, ship: str, update: Update, name: str) -> tuple[DataFrame, np.ndarray]:
        """:meth:`product`, and the Gram matrix X^T X (d x d) of the matrix ``name`` that
        ``update`` returns: each row chunk's task adds its part as it stores the chunk,
        and only those d x d parts are read back (the same result as :func:`gram` of the
        new state, without a second pass over it)."""
        out = self._product(state, ship, update, gram=name)
        return out.where(F.col("name") != _GRAM), _gram_total(out.where(F.col("name") == _GRAM), name)

    def entry_sums(
        self, state: DataFrame, left: str, right: str, sums: Callable[[np.ndarray, np.ndarray], np.ndarray]
    ) -> np.ndarray:
        """Sums over the stored entries of a function of their values and of the dot
        products of their rows and columns: for every entry ``(i, j, v)`` of S, ``p =
        X[i] . Y[j]`` with ``X``, ``Y`` the matrices ``left`` and ``right`` of ``state``
        (the values of W C^T at S's pattern, without forming it), and ``sums(v, p)`` a
        fixed-length vector of sums over a batch of entries. A pair given twice to
        :meth:`build` is one entry, its values added.

        One partition-wise stage, as the first half of a product: every pair (row block,
        column block) meets the column chunks of ``right`` that its entries read and its
        own row chunks of ``left``, and adds ``sums`` over its entries in batches of
        65,536; the blocks² vectors are collected and added in a fixed order.

        Returns
        -------
        numpy.ndarray
            The vector of sums (empty when S has no entry).
        """
        cr = self.chunk_rows
        own = (
            state.where(F.col("name") == left)
            .select(F.col("b").alias("rb"), "c", "name", "rows", "cols", "data")
            .join(self.entries.select("rb", "cb", "c"), ["rb", "c"])
            .select("rb", F.lit(_OWN).alias("kind"), "cb", "c", "name", "rows", "cols", "data")
        )
        out_schema = StructType([StructField("rb", IntegerType(), False), StructField("cb", IntegerType(), False),
                                 StructField("sums", BinaryType(), False)])

        def run(pdf: pd.DataFrame) -> pd.DataFrame:
            rb, cb = int(pdf["rb"].iloc[0]), int(pdf["cb"].iloc[0])
            kind = pdf["kind"].to_numpy()
            Y, locate = _columns(pdf[kind == _SHIPPED].sort_values("c"), "float64", cr,
                                 f"row block {rb}, column block {cb}")
            rows = {int(c): _chunk_view(data, int(r), int(k))
                    for c, r, k, data in zip(pdf["c"][kind == _OWN], pdf["rows"][kind == _OWN],
                                             pdf["cols"][kind == _OWN], pdf["data"][kind == _OWN])}
            total: np.ndarray | None = None
            ent = pdf[kind == _ENTRIES]
            for c, data in sorted(zip(ent["c"].astype(int), ent["data"]), key=lambda t: t[0]):
                r, ci, v = _unpack(data)
                if c not in rows:
                    raise RuntimeError(f"row block {rb}: its row chunk {c} of {left!r} is missing")
                X, cols = rows[c], locate(ci)
                for lo in range(0, len(r), 1 << 16):
                    hi = lo + (1 << 16)
                    p = np.einsum("ij,ij->i", X[r[lo:hi]].astype(np.float64), Y[cols[lo:hi]])
                    part = np.asarray(sums(np.asarray(v[lo:hi], dtype=np.float64), p), dtype=np.float64)
                    total = part if total is None else total + part
            data = b"" if total is None else total.astype("<f8").tobytes()
            return pd.DataFrame({"rb": [rb], "cb": [cb], "sums": [data]})

        parts = self._shipped(state, right).unionByName(own).groupBy("rb", "cb").applyInPandas(run, schema=out_schema)
        collected = sorted((int(r["rb"]), int(r["cb"]), bytes(r["sums"])) for r in parts.collect())
        vectors = [np.frombuffer(data, dtype="<f8") for _, _, data in collected if data]
        return np.sum(vectors, axis=0) if vectors else np.zeros(0)

    def map_blocks(
        self, state: DataFrame, update: Callable[[Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]
    ) -> DataFrame:
        """``update(own) -> new own`` for every row chunk (row-wise, as in
        :meth:`product`), without a product: one shuffle of the state by chunk."""
        dtype = self.dtype

        def run(pdf: pd.DataFrame) -> pd.DataFrame:
            b, c = int(pdf["b"].iloc[0]), int(pdf["c"].iloc[0])
            return _emitted(b, c, update(_block_matrices(pdf)), dtype, None)

        return _checkpoint(state.groupBy("b", "c").applyInPandas(run, schema=CHUNK_SCHEMA))


def _stored(index: DataFrame, entries: DataFrame, cr: int) -> tuple[DataFrame, DataFrame]:
    """``entries`` (``src, dst, value``) keyed by ``index`` (``id, b, i``) and packed by
    (row block, column block, row chunk), and the column chunks each row block reads.

    The two joins that key the entries run once: each packed row also lists the column
    chunks its entries fall in (``cc``), and the demand is read from the packed table
    (as many rows as there are packed chunks) instead of keying the entries again."""
    rows = index.select(F.col("id").alias("src"), F.col("b").alias("rb"), F.col("i").alias("ri"))
    cols = index.select(F.col("id").alias("dst"), F.col("b").alias("cb"), F.col("i").alias("ci"))
    keyed_entries = entries.join(rows, "src").join(cols, "dst").select(
        "rb", "ri", "cb", "ci", F.col("value").cast("double").alias("value")
    )
    packed_schema = StructType(
        [StructField("rb", IntegerType(), False), StructField("cb", IntegerType(), False),
         StructField("c", IntegerType(), False), StructField("data", BinaryType(), False),
         StructField("cc", ArrayType(IntegerType(), False), False)]
    )

    def pack(pdf: pd.DataFrame) -> pd.DataFrame:
        ri = pdf["ri"].to_numpy(np.int64)
        ci = pdf["ci"].to_numpy(np.int64)
        c = int(ri[0] // cr)
        v = pdf["value"].to_numpy(np.float64)
        order = np.lexsort((v, ci, ri))  # a fixed order (a position given twice: by value): the same sums on every run
        ri, ci, v = ri[order], ci[order], v[order]
        first = np.concatenate([[True], (ri[1:] != ri[:-1]) | (ci[1:] != ci[:-1])]) if len(ri) else np.zeros(0, bool)
        if not first.all():  # a position given more than once: one entry, its values added in order
            v = np.add.reduceat(v, np.flatnonzero(first))
            ri, ci = ri[first], ci[first]
        data = _pack(ri - c * cr, ci, v)
        return pd.DataFrame({"rb": [int(pdf["rb"].iloc[0])], "cb": [int(pdf["cb"].iloc[0])], "c": [c],
                             "data": [data], "cc": [np.unique(ci // cr).astype(np.int32).tolist()]})

    chunk = (F.col("ri") / F.lit(cr)).cast("int")
    packed = _checkpoint(
        keyed_entries.groupBy("rb", "cb", chunk.alias("chunk")).applyInPandas(pack, schema=packed_schema)
    )
    demand = _checkpoint(packed.select("rb", "cb", F.explode("cc").alias("c")).distinct())
    return packed.select("rb", "cb", "c", "data"), demand


def gram(state: DataFrame, name: str) -> np.ndarray:
    """X^T X of matrix ``name`` (d x d float64): one part per row chunk in a
    partition-wise stage (as :meth:`BlockGraph.product_with_gram` stores them), then
    their sums in :data:`GRAM_GROUPS` small tasks, whose d x d totals are all that
    reaches the driver. The parts are the chunks' own, whatever partitions hold them,
    and are added in an order of their values (:func:`_gram_total`), so the result is
    the same bits on every run and partitioning."""
    schema = StructType([StructField("data", BinaryType(), False), StructField("rows", IntegerType(), False)])

    def partial(batches):
        for pdf in batches:
            for r, k, data in zip(pdf["rows"], pdf["cols"], pdf["data"]):
                X = _chunk_array(data, int(r), int(k))
                g = X.T @ X
                yield pd.DataFrame({"data": [g.astype("<f8").tobytes()], "rows": [int(g.shape[0])]})

    return _gram_total(state.where(F.col("name") == name).mapInPandas(partial, schema=schema), name)


#: The d x d parts of a Gram matrix are added in this many groups (by a hash of their
#: values), each in a task of its own, and the group totals on the driver: the driver
#: receives at most this many d x d matrices (8 MB at d = 128), and no task holds more
#: than about 1 / GRAM_GROUPS of the parts (n / 4096 of them in all).
GRAM_GROUPS = 64


def _order_free_sum(mats: list[np.ndarray]) -> np.ndarray:
    """The sum of ``mats`` in an order of their own values: the same bits whatever
    order they come in."""
    return np.sum(sorted(mats, key=lambda m: m.tobytes()), axis=0)


def _gram_total(parts: DataFrame, name: str, count: str | None = None) -> np.ndarray | tuple[np.ndarray, int]:
    """The sum of the d x d float64 matrices in ``parts`` (``data``, ``rows = d``),
    collected: d x d, whatever n. The parts are added in :data:`GRAM_GROUPS` groups
    chosen by a hash of their values, in each group in an order of their values, and
    the group totals likewise on the driver, so the result has the same bits on every
    run and partitioning. With ``count``, the name of an integer column of ``parts``,
    its sum too: ``(matrix, total)``."""
    fields = [StructField("data", BinaryType(), False), StructField("rows", IntegerType(), False)]
    if count is not None:
        fields.append(StructField(count, LongType(), False))
    schema = StructType(fields)

    def add(pdf: pd.DataFrame) -> pd.DataFrame:
        d = int(pdf["rows"].iloc[0])
        total = _order_free_sum([np.frombuffer(g, dtype="<f8").reshape(d, d) for g in pdf["data"]])
        row = {"data": [total.astype("<f8").tobytes()], "rows": [d]}
        if count is not None:
            row[count] = [int(pdf[count].sum())]
        return pd.DataFrame(row)

    group = F.pmod(F.xxhash64("data"), F.lit(GRAM_GROUPS)).alias("group")
    rows = parts.select(*schema.fieldNames()).groupBy(group).applyInPandas(add, schema=schema).collect()
    if not rows:
        raise ValueError(f"gram: the state holds no chunk of matrix {name!r}")
    d = int(rows[0]["rows"])
    matrix = _order_free_sum([np.frombuffer(r["data"], dtype="<f8").reshape(d, d) for r in rows])
    return matrix if count is None else (matrix, sum(int(r[count]) for r in rows))


def _pack(r: np.ndarray, col: np.ndarray, v: np.ndarray) -> bytes:
    """Packed COO arrays of one row chunk's entries in one column block: their count
    (int64), then the row in the chunk and the row of the column in its block (int32
    each, as the index's ``i`` is) and the values (float64)."""
    return (np.array([len(r)], dtype="<i8").tobytes() + np.asarray(r).astype("<i4").tobytes()
            + np.asarray(col).astype("<i4").tobytes() + np.asarray(v, dtype=np.float64).astype("<f8").tobytes())


def _unpack(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The arrays :func:`_pack` stored: rows in the chunk, rows of the columns in their
    block (both int32) and values (float64)."""
    nnz = int(np.frombuffer(data[:8], dtype="<i8")[0])
    o = 8
    r = np.frombuffer(data[o:o + 4 * nnz], dtype="<i4")
    o += 4 * nnz
    col = np.frombuffer(data[o:o + 4 * nnz], dtype="<i4")
    o += 4 * nnz
    v = np.frombuffer(data[o:o + 8 * nnz], dtype="<f8")
    return r, col, v


__all__ = ["BlockGraph", "CHUNK_ROWS", "CHUNK_SCHEMA", "gram"]
