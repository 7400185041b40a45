# The jars the generated client and the kit need, from Debian's packages.
DEPS=/usr/share/java/jackson-databind.jar:/usr/share/java/jackson-core.jar:/usr/share/java/jackson-annotations.jar:/usr/share/java/geronimo-annotation-1.3-spec.jar:/usr/share/java/jsr305.jar
