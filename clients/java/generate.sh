#!/usr/bin/env bash
# Regenerates the Java client from openapi/merchant.json with the pinned
# openapi-generator (../openapi-generator.sh, `native` library: java.net.http
# and Jackson), then compiles it, the kit and the smoke suite with javac.
# Jackson and the annotation jars come from Debian's packages: Maven Central
# is not a registry this project uses, so there is no Maven build.
set -euo pipefail
cd "$(dirname "$0")"
debian() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" > /dev/null ||
    { apt-get update > /dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" > /dev/null; }
}
command -v javac > /dev/null || debian default-jdk-headless
for jar in jackson-databind jackson-core jackson-annotations geronimo-annotation-1.3-spec jsr305; do
  [ -f "/usr/share/java/$jar.jar" ] || debian libjackson2-databind-java libjackson2-core-java \
    libjackson2-annotations-java libgeronimo-annotation-1.3-spec-java libjsr305-java
done

rm -rf generated build
# dateLibrary=legacy: the java.time module of Jackson (jsr310) is not in
# Debian; timestamps read as java.util.Date. Amounts are BigDecimal.
../openapi-generator.sh generate -i ../../openapi/merchant.json -g java --library native -o generated \
  --additional-properties=openApiNullable=false,dateLibrary=legacy,annotationLibrary=none,hideGenerationTimestamp=true \
  --additional-properties=invokerPackage=payments.merchant.client,apiPackage=payments.merchant.api,modelPackage=payments.merchant.model \
  > generated.log 2>&1 || { cat generated.log; exit 1; }
mv generated.log generated/
# The native library registers Jackson's java.time modules even with the
# legacy date library; nothing it generated here uses java.time.
src=generated/src/main/java/payments/merchant/client
rm -f "$src/RFC3339JavaTimeModule.java" "$src/RFC3339InstantDeserializer.java"
sed -i -e '/jsr310/d' -e '/new JavaTimeModule()/d' -e '/new RFC3339JavaTimeModule()/d' "$src/ApiClient.java" "$src/JSON.java"
if grep -rq 'jsr310\|JavaTimeModule' generated/src/main/java; then
  grep -rn 'jsr310\|JavaTimeModule' generated/src/main/java | head; echo "java: the generated client still needs Jackson's jsr310 module"; exit 1
fi

. ./classpath.sh
mkdir -p build/generated build/classes
javac -nowarn -encoding UTF-8 -d build/generated -cp "$DEPS" $(find generated/src/main/java -name '*.java') 2>&1 | grep -v '^Note:' || true
[ -f build/generated/payments/merchant/api/DepositsApi.class ] || { echo "java: the generated client did not compile"; exit 1; }
javac -Xlint:all -Werror -encoding UTF-8 -d build/classes -cp "$DEPS:build/generated" $(find src smoke -name '*.java')
echo "java: generated/ from openapi/merchant.json (openapi-generator $(../openapi-generator.sh version)), kit and smoke suite compiled"
