package org.pgetl.core.internal.apply;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import org.pgetl.PipelineConfig;
import org.pgetl.error.ErrorKind;
import org.pgetl.error.EtlException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The folder where one pipeline's streams keep the changes of streamed in-progress transactions
 * until their commit ({@code <spoolDirectory>/<pipelineId>}), and the disk those files may take
 * together ({@code spoolMaxBytes}).
 *
 * <p>Every stream of the pipeline — the apply stream and each table's catch-up stream — has its own
 * {@link StreamSpool}, which names its files here ({@code <stream>-<token>-<n>-<xid>.spool}: the
 * token names this pipeline instance — its process id and a random number — and {@code n} counts
 * its files) and reserves their bytes against the shared cap. Nothing in the folder survives a
 * restart on purpose: the server sends a transaction again, from its first change, until its commit
 * was confirmed, so {@link #clean()} empties the folder at the pipeline's start. Thread-safe.
 */
public final class SpoolFolder {
  private static final Logger LOG = LoggerFactory.getLogger(SpoolFolder.class);

  /** The suffix of every spool file: {@link #clean()} deletes files with it, nothing else. */
  static final String SUFFIX = ".spool";

  private final Path dir;
  private final long maxBytes;
  private final String pipelineId;
  private final AtomicLong used = new AtomicLong();
  private final AtomicLong files = new AtomicLong();
  private final String token =
      ProcessHandle.current().pid()
          + "."
          + Integer.toHexString(new java.security.SecureRandom().nextInt());

  /**
   * Creates the spool folder of a pipeline; nothing is touched on disk yet.
   *
   * @param config the pipeline's configuration ({@code spoolDirectory}, {@code spoolMaxBytes})
   */
  public SpoolFolder(PipelineConfig config) {
    this(
        config.spoolDirectory().resolve(config.pipelineId()),
        config.spoolMaxBytes(),
        config.pipelineId());
  }

  SpoolFolder(Path dir, long maxBytes, String pipelineId) {
    this.dir = dir.toAbsolutePath();
    this.maxBytes = maxBytes;
    this.pipelineId = pipelineId;
  }

  /**
   * Returns the folder.
   *
   * @return {@code <spoolDirectory>/<pipelineId>}, absolute
   */
  public Path path() {
    return dir;
  }

  /**
   * Returns the bytes the spool files of this pipeline take now.
   *
   * @return the bytes reserved by every stream together
   */
  public long usedBytes() {
    return used.get();
  }

  /**
   * Creates the folder when missing and deletes the spool files a previous process left behind (a
   * crash, a kill): their transactions are sent again by the server. Called at the pipeline's
   * start, before any stream runs.
   *
   * @throws EtlException of kind {@code CONFIG_ERROR} when the folder cannot be created or emptied
   */
  public void clean() {
    int deleted = 0;
    try {
      Files.createDirectories(dir);
      try (DirectoryStream<Path> leftovers = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
        for (Path p : leftovers) {
          Files.deleteIfExists(p);
          deleted++;
        }
      }
    } catch (IOException | RuntimeException e) {
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "spoolDirectory " + dir + " cannot be created or emptied: " + e,
          "point spoolDirectory at a folder this process can write, or turn pgoutputStreaming off",
          e);
    }
    if (deleted > 0) {
      LOG.info(
          "pipeline {}: deleted {} spool files left in {} by an earlier run (their transactions"
              + " are streamed again)",
          pipelineId,
          deleted,
          dir);
    }
  }

  /**
   * Returns a new file name for a streamed transaction, creating the folder when missing.
   *
   * @param stream the stream's tag, like {@code apply} or {@code sync-16384}
   * @param xid the transaction's xid
   * @return a path no other stream uses
   * @throws EtlException of kind {@code CONFIG_ERROR} when the folder cannot be created
   */
  Path newFile(String stream, long xid) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw ioFailure("cannot create " + dir, e);
    }
    return dir.resolve(stream + "-" + token + "-" + files.incrementAndGet() + "-" + xid + SUFFIX);
  }

  /**
   * Reserves disk for bytes about to be written.
   *
   * @param bytes how many
   * @throws EtlException of kind {@code CONFIG_ERROR} naming {@code spoolMaxBytes} when the
   *     pipeline's spool files would take more than it allows; nothing is reserved then
   */
  void reserve(long bytes) {
    long after = used.addAndGet(bytes);
    if (after > maxBytes) {
      used.addAndGet(-bytes);
      throw new EtlException(
          ErrorKind.CONFIG_ERROR,
          "streamed in-progress transactions need more than spoolMaxBytes ("
              + maxBytes
              + " bytes) of spool files in "
              + dir,
          "raise spoolMaxBytes (and make room for it under spoolDirectory), or set"
              + " pgoutputStreaming(false) so that the server keeps large transactions until their"
              + " commit; then start the pipeline again (the transaction is streamed again from"
              + " its start)");
    }
  }

  /**
   * Gives back bytes of deleted or truncated spool files.
   *
   * @param bytes how many
   */
  void release(long bytes) {
    used.addAndGet(-bytes);
  }

  /**
   * Returns the failure of a spool file operation.
   *
   * @param what what failed
   * @param cause the I/O error
   * @return an exception of kind {@code CONFIG_ERROR} naming the folder
   */
  EtlException ioFailure(String what, IOException cause) {
    return new EtlException(
        ErrorKind.CONFIG_ERROR,
        "spool file I/O failed in spoolDirectory " + dir + ": " + what + ": " + cause,
        "check that the folder is writable and its disk not full (spoolMaxBytes is "
            + maxBytes
            + " bytes), or set pgoutputStreaming(false); then start the pipeline again",
        cause);
  }
}
