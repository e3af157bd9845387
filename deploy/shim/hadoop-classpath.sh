#!/bin/sh
# The classpath to compile the shim against a Hadoop install (Makefile, HADOOP_HOME=...).
#   sh hadoop-classpath.sh HADOOP_HOME [COMPILE_CLASSPATH]
# Prints "classpath: <entries>" and exits 0, or prints ONE line saying what is wrong and exits 3
# (the Makefile stops with that line). Where from, in order: COMPILE_CLASSPATH when given;
# `$HADOOP_HOME/bin/hadoop classpath`; else — a tarball whose scripts do not run here, e.g.
# without JAVA_HOME — the jars under $HADOOP_HOME/share/hadoop/{common,hdfs,yarn}{,/lib} (noted
# on stderr). The result must hold the jars the shim compiles against (NEEDED, by file name).
home=$1
given=$2
NEEDED="hadoop-common hadoop-hdfs hadoop-hdfs-client hadoop-yarn-api hadoop-yarn-server-resourcemanager jackson-databind slf4j-api"
HINT="set HADOOP_HOME to a Hadoop 3.3.6 install or HADOOP_COMPILE_CLASSPATH to its jars"

fail() {
  echo "harvester-shim: $*"
  exit 3
}

# The jars under share/hadoop, as wildcard entries (javac expands dir/*), or nothing.
share_jars() {
  cp=""
  for d in common common/lib hdfs hdfs/lib yarn yarn/lib; do
    for j in "$home/share/hadoop/$d"/*.jar; do
      [ -f "$j" ] && cp="$cp${cp:+:}$home/share/hadoop/$d/*"
      break
    done
  done
  echo "$cp"
}

if [ -n "$given" ]; then
  cp=$given
  from="HADOOP_COMPILE_CLASSPATH"
else
  [ -d "$home" ] || fail "HADOOP_HOME=$home is not a directory; $HINT"
  script="$home/bin/hadoop"
  from="\`$script classpath\`"
  problem=""
  if [ -x "$script" ]; then
    out=$(mktemp) err=$(mktemp)
    "$script" classpath >"$out" 2>"$err"
    rc=$?
    cp=$(sed -n '$p' "$out") # the classpath is its last line
    first=$(sed -n '1p' "$err")
    rm -f "$out" "$err"
    if [ "$rc" -ne 0 ]; then
      problem="$from failed (exit $rc${first:+: $first})"
      cp=""
    elif [ -z "$cp" ]; then
      problem="$from printed nothing"
    fi
  else
    cp=""
    problem="$script is missing or not executable"
  fi
  if [ -n "$problem" ]; then
    cp=$(share_jars)
    [ -n "$cp" ] || fail "cannot read Hadoop's classpath: $problem and $home/share/hadoop has no jars; $HINT"
    echo "harvester-shim: $problem: using the jars under $home/share/hadoop" >&2
    from="$home/share/hadoop"
  fi
fi

# Every jar the classpath names (dir/* expands to the jars in dir), by file name.
names=""
oldifs=$IFS
IFS=:
for e in $cp; do
  IFS=$oldifs
  case "$e" in
    */\*) for j in "${e%/\*}"/*.jar "${e%/\*}"/*.JAR; do [ -f "$j" ] && names="$names ${j##*/}"; done ;;
    *.jar | *.JAR) [ -f "$e" ] && names="$names ${e##*/}" ;;
  esac
  IFS=:
done
IFS=$oldifs

missing=""
for need in $NEEDED; do
  found=""
  for n in $names; do
    case "$n" in
      # hadoop-hdfs-3.3.6.jar or hadoop-hdfs.jar, not hadoop-hdfs-client-3.3.6.jar
      "$need".jar | "$need"-[0-9]*) found=1 ;;
    esac
  done
  [ -n "$found" ] || missing="$missing${missing:+, }$need"
done
[ -z "$missing" ] || fail "Hadoop's classpath (from $from) lacks $missing; $HINT"
echo "classpath: $cp"
