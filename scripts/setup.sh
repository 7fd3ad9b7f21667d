#!/usr/bin/env bash
# Set up a local development environment: a virtualenv with the package and its test
# extras, and the GraphFrames JAR (plus its runtime dependencies) in ./jars.
# Idempotent: a second run only checks what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
GF_VERSION=$(sed -n 's/^GRAPHFRAMES_VERSION = "\(.*\)"/\1/p' setup.py)
GF_ARTIFACT="io.graphframes:graphframes-spark4_2.13:${GF_VERSION}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating virtualenv $VENV"
  "$PY" -m venv "$VENV"
fi
stamp="$VENV/.sepne-installed"
if [ ! -f "$stamp" ] || [ setup.py -nt "$stamp" ]; then
  echo "[setup] installing sepne-spark and test dependencies"
  "$VENV/bin/pip" install -q --upgrade pip >/dev/null
  "$VENV/bin/pip" install -q -e ".[test]"
  touch "$stamp"
fi

mkdir -p jars
if ls jars/graphframes-spark4_2.13-"${GF_VERSION}".jar >/dev/null 2>&1; then
  echo "[setup] GraphFrames ${GF_VERSION} JAR present in jars/"
elif command -v mvn >/dev/null 2>&1; then
  echo "[setup] fetching ${GF_ARTIFACT} and its runtime dependencies with mvn"
  tmp=$(mktemp -d)
  cat > "$tmp/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.sepne</groupId><artifactId>jars</artifactId><version>1</version>
  <dependencies>
    <dependency>
      <groupId>io.graphframes</groupId>
      <artifactId>graphframes-spark4_2.13</artifactId>
      <version>${GF_VERSION}</version>
    </dependency>
  </dependencies>
</project>
POM
  if mvn -q -U -f "$tmp/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
       -DexcludeGroupIds=org.scala-lang,org.slf4j -DoutputDirectory="$PWD/jars" >"$tmp/mvn.log" 2>&1; then
    echo "[setup] GraphFrames JARs in jars/: $(ls jars | tr '\n' ' ')"
  else
    echo "[setup] WARNING: could not fetch ${GF_ARTIFACT} from the Maven repository:" >&2
    grep -m1 -E "Could not|ERROR" "$tmp/mvn.log" | sed 's/\x1b\[[0-9;]*m//g' >&2 || true
    echo "[setup] sepne-spark will use its DataFrame implementations of degrees and label" >&2
    echo "[setup] propagation; pass --packages ${GF_ARTIFACT} (or put the JAR in jars/) to use GraphFrames." >&2
  fi
  rm -rf "$tmp"
else
  echo "[setup] WARNING: mvn not found; GraphFrames JAR not fetched" >&2
fi
