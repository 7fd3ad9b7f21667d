#!/usr/bin/env bash
# Set up a local development environment: a virtualenv with the package and its test
# extras, and the GraphFrames JARs in ./jars: from the Maven repository when it serves
# them, else from $SEPNE_GRAPHFRAMES_JARS or ../shared/graphframes/jars (checksums verified).
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
GF_JARS=("graphframes-spark4_2.13-${GF_VERSION}.jar" "graphframes-graphx-spark4_2.13-${GF_VERSION}.jar")
have_jars() { for j in "${GF_JARS[@]}"; do [ -f "jars/$j" ] || return 1; done; }

# 1. The Maven repository (core and its GraphX module; Spark and Scala are provided).
fetch_maven() {
  command -v mvn >/dev/null 2>&1 || { echo "[setup] mvn not found" >&2; return 1; }
  local tmp rc=0
  tmp=$(mktemp -d)
  cat > "$tmp/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.sepne</groupId><artifactId>jars</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>io.graphframes</groupId><artifactId>graphframes-spark4_2.13</artifactId><version>${GF_VERSION}</version></dependency>
    <dependency><groupId>io.graphframes</groupId><artifactId>graphframes-graphx-spark4_2.13</artifactId><version>${GF_VERSION}</version></dependency>
  </dependencies>
</project>
POM
  if mvn -q -U -f "$tmp/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
       -DexcludeGroupIds=org.scala-lang,org.slf4j,org.apache.spark -DoutputDirectory="$PWD/jars" >"$tmp/mvn.log" 2>&1; then
    echo "[setup] GraphFrames ${GF_VERSION}: from the Maven repository"
  else
    # Maven's own words: the artifact it could not find and where it looked, else its
    # first error without the "[ERROR] Failed to execute goal" prefix. A fallback
    # follows, so this is not an error of the set-up.
    local reason
    reason=$(sed 's/\x1b\[[0-9;]*m//g' "$tmp/mvn.log" | grep -o -m1 -E 'Could not (find|transfer) artifact [^ ]+ (in|from/to) [^ ]+( \([^)]*\))?' || true)
    [ -n "$reason" ] || reason=$(grep -m1 -E 'Could not|ERROR' "$tmp/mvn.log" | sed 's/\x1b\[[0-9;]*m//g; s/^\[ERROR\] *//; s/^Failed to execute goal [^:]*: *//' | cut -c1-240 || true)
    echo "[setup] the Maven repository does not serve ${GF_ARTIFACT} (trying the next source): ${reason}" >&2
    rc=1
  fi
  rm -rf "$tmp"
  return $rc
}

# 2. A local folder of JARs: $SEPNE_GRAPHFRAMES_JARS, or ../shared/graphframes/jars beside a
#    checkout. Each JAR is checked against the folder's SHA256SUMS before it is copied.
copy_local() {
  local dir
  for dir in "${SEPNE_GRAPHFRAMES_JARS:-}" "../shared/graphframes/jars"; do
    [ -n "$dir" ] && [ -d "$dir" ] || continue
    if [ ! -f "$dir/SHA256SUMS" ]; then
      echo "[setup] $dir has no SHA256SUMS: not used" >&2; continue
    fi
    local ok=1 j
    for j in "${GF_JARS[@]}" "graphframes-connect-spark4_2.13-${GF_VERSION}.jar"; do
      [ -f "$dir/$j" ] || { [ "$j" = "graphframes-connect-spark4_2.13-${GF_VERSION}.jar" ] && continue; ok=0; break; }
      if ! (cd "$dir" && grep -E "[ /]$j\$" SHA256SUMS | sha256sum -c --quiet - >/dev/null 2>&1); then
        echo "[setup] $dir/$j does not match its SHA256SUMS entry: not used" >&2; ok=0; break
      fi
    done
    [ $ok = 1 ] || continue
    for j in "${GF_JARS[@]}"; do cp "$dir/$j" jars/; done
    # The Spark Connect server plugin lives apart: only a Connect server loads it.
    if [ -f "$dir/graphframes-connect-spark4_2.13-${GF_VERSION}.jar" ]; then
      mkdir -p jars/connect && cp "$dir/graphframes-connect-spark4_2.13-${GF_VERSION}.jar" jars/connect/
    fi
    echo "[setup] GraphFrames ${GF_VERSION}: from $(cd "$dir" && pwd) (checksums verified)"
    return 0
  done
  return 1
}

if have_jars; then
  echo "[setup] GraphFrames ${GF_VERSION} JARs present in jars/"
elif fetch_maven || copy_local; then
  :
else
  echo "[setup] WARNING: no GraphFrames ${GF_VERSION} JARs: sepne-spark will use its DataFrame" >&2
  echo "[setup] implementations of degrees and label propagation. Set SEPNE_GRAPHFRAMES_JARS to a" >&2
  echo "[setup] folder with the JARs and SHA256SUMS, or pass --packages ${GF_ARTIFACT} on a cluster." >&2
fi

# 3. The Spark Connect server plugin, when the JARs above came from elsewhere (Maven, or an
#    earlier set-up) without it: only from a local folder with SHA256SUMS.
GF_CONNECT="graphframes-connect-spark4_2.13-${GF_VERSION}.jar"
if have_jars && [ ! -f "jars/connect/$GF_CONNECT" ]; then
  for dir in "${SEPNE_GRAPHFRAMES_JARS:-}" "../shared/graphframes/jars"; do
    [ -n "$dir" ] && [ -f "$dir/$GF_CONNECT" ] && [ -f "$dir/SHA256SUMS" ] || continue
    if (cd "$dir" && grep -E "[ /]$GF_CONNECT\$" SHA256SUMS | sha256sum -c --quiet - >/dev/null 2>&1); then
      mkdir -p jars/connect && cp "$dir/$GF_CONNECT" jars/connect/
      echo "[setup] GraphFrames Spark Connect plugin: from $(cd "$dir" && pwd) (checksum verified)"
      break
    fi
    echo "[setup] $dir/$GF_CONNECT does not match its SHA256SUMS entry: not used" >&2
  done
  [ -f "jars/connect/$GF_CONNECT" ] || echo "[setup] no GraphFrames Spark Connect plugin in jars/connect:" \
    "the Spark Connect tests of GraphFrames will skip (and fail under CI)" >&2
fi
