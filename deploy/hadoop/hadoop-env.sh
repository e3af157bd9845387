# Sourced by every Hadoop command in the demo containers (this folder is the whole HADOOP_CONF_DIR,
# so it replaces the image's hadoop-env.sh). Keep it to what the containers need.

# The image sets JAVA_HOME; derive it from `java` on the PATH if a variant of the image does not.
if [ -z "${JAVA_HOME}" ] && command -v java >/dev/null 2>&1; then
  JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
  export JAVA_HOME
fi

# The apache/hadoop:3.3.6 image runs Java 8, so no --add-opens flags are needed (those are for
# Java 17; see ../shared/fixtures/README.md).

# The `hdfs` script passes -Dhdfs.audit.logger=$HDFS_AUDIT_LOGGER to the NameNode. log4j.properties
# binds the audit logger to RFAAUDIT itself; saying the same here keeps `ps` output truthful.
# The file is ${HADOOP_LOG_DIR}/hdfs-audit.log (docker-compose.yml puts HADOOP_LOG_DIR on a volume).
export HDFS_AUDIT_LOGGER="${HDFS_AUDIT_LOGGER:-INFO,RFAAUDIT}"
