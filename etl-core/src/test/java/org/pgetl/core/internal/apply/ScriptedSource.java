package org.pgetl.core.internal.apply;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.pgetl.core.internal.pg.MessageSource;
import org.pgetl.core.internal.time.ManualTicker;
import org.pgetl.model.Lsn;

/**
 * A message source that plays what a test queues: messages, keepalives, moves of the ticker and
 * actions run on the loop's thread between two messages. Like the server stream it waits for data
 * up to the loop's bound and returns as soon as a step is queued. It records every position the
 * loop asked it to confirm and every status update it "sent".
 */
final class ScriptedSource implements MessageSource {

  /** A status update as the server would have received it. */
  record Status(Lsn flushed, Lsn received, String why) {}

  private sealed interface Step permits Message, Messages, Keepalive, Advance, Action, Quiet {}

  private record Message(byte[] bytes, Lsn walStart) implements Step {}

  /** Messages queued at once: the loop never finds the stream empty between them. */
  private record Messages(List<Message> messages) implements Step {}

  private record Keepalive(Lsn walEnd, boolean replyRequested) implements Step {}

  private record Advance(Duration amount) implements Step {}

  private record Action(Runnable run) implements Step {}

  private record Quiet() implements Step {}

  private final BlockingQueue<Step> steps = new LinkedBlockingQueue<>();
  // the rest of a Messages step being read (only the loop's thread touches it)
  private final java.util.ArrayDeque<Message> pending = new java.util.ArrayDeque<>();
  private volatile boolean pendingEmpty = true;
  private final List<Long> readWaits = new java.util.ArrayList<>();
  private final ManualTicker ticker;
  private final List<Lsn> confirmed = new ArrayList<>();
  private final List<Status> statuses = new ArrayList<>();
  private volatile Lsn received;
  private volatile Lsn flushed;
  private Lsn lastMessage = Lsn.ZERO;
  // the last message was not queued when the loop asked: it had to wait for it (loop thread only)
  private boolean waited;
  private Lsn lastSentFlushed;
  private volatile boolean closed;

  ScriptedSource(ManualTicker ticker, Lsn start) {
    this.ticker = ticker;
    this.received = start;
    // unlike the server stream, which reports 0/0 until told otherwise, this one starts at the
    // start LSN: the server never moves a slot back, so confirming it again changes nothing
    this.flushed = start;
    this.lastSentFlushed = start;
  }

  /** Queues a pgoutput message the server sent with this WAL start. */
  ScriptedSource message(byte[] bytes, Lsn walStart) {
    steps.add(new Message(bytes, walStart));
    return this;
  }

  /**
   * Queues several pgoutput messages as one step, so that the loop reads them back to back (as it
   * does a transaction the server sent in one go) and never finds the stream empty in between.
   */
  ScriptedSource messages(List<byte[]> bytes, List<Lsn> walStarts) {
    if (bytes.size() != walStarts.size()) {
      throw new IllegalArgumentException("one WAL start per message");
    }
    List<Message> all = new ArrayList<>();
    for (int i = 0; i < bytes.size(); i++) {
      all.add(new Message(bytes.get(i), walStarts.get(i)));
    }
    steps.add(new Messages(List.copyOf(all)));
    return this;
  }

  /** Queues a keepalive carrying the server's WAL end. */
  ScriptedSource keepalive(Lsn walEnd, boolean replyRequested) {
    steps.add(new Keepalive(walEnd, replyRequested));
    return this;
  }

  /** Queues a move of the ticker, as if that much time passed before the next step. */
  ScriptedSource advance(Duration amount) {
    steps.add(new Advance(amount));
    return this;
  }

  /** Queues a read that finds the stream empty, however many steps follow it. */
  ScriptedSource quiet() {
    steps.add(new Quiet());
    return this;
  }

  /** Queues an action run on the loop's thread at this point of the stream. */
  ScriptedSource then(Runnable action) {
    steps.add(new Action(action));
    return this;
  }

  /** True once the loop read every queued step. */
  boolean drained() {
    return steps.isEmpty() && pendingEmpty;
  }

  /** The flush positions the loop confirmed, in order, each greater than the one before. */
  synchronized List<Lsn> confirmed() {
    return List.copyOf(confirmed);
  }

  /** The status updates sent, in order. */
  synchronized List<Status> statuses() {
    return List.copyOf(statuses);
  }

  /** The status updates sent in reply to a keepalive that asked for one. */
  synchronized List<Status> replies() {
    return statuses.stream().filter(s -> s.why().equals("reply")).toList();
  }

  Lsn flushed() {
    return flushed;
  }

  /** The longest wait of each read the loop made, newest last. */
  synchronized List<Long> readWaits() {
    return List.copyOf(readWaits);
  }

  @Override
  public ByteBuffer readNext(long maxWaitNanos) {
    synchronized (this) {
      readWaits.add(maxWaitNanos);
    }
    if (!pending.isEmpty()) {
      Message m = pending.poll();
      pendingEmpty = pending.isEmpty();
      waited = false;
      return deliver(m);
    }
    Step s = steps.poll();
    waited = s == null;
    if (s == null && maxWaitNanos > 0) {
      try {
        s = steps.poll(maxWaitNanos, TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
    }
    while (s != null) {
      if (s instanceof Message m) {
        return deliver(m);
      } else if (s instanceof Messages ms && !ms.messages().isEmpty()) {
        pending.addAll(ms.messages().subList(1, ms.messages().size()));
        pendingEmpty = pending.isEmpty();
        return deliver(ms.messages().get(0));
      } else if (s instanceof Keepalive k) {
        received = Lsn.max(received, k.walEnd());
        if (k.replyRequested()) {
          send("reply");
        }
      } else if (s instanceof Advance a) {
        ticker.advance(a.amount());
      } else if (s instanceof Action a) {
        a.run().run();
      } else if (s instanceof Quiet) {
        break;
      }
      s = steps.poll();
    }
    sendStatusIfDue();
    return null;
  }

  private ByteBuffer deliver(Message m) {
    lastMessage = m.walStart();
    received = Lsn.max(received, m.walStart());
    sendStatusIfDue();
    return ByteBuffer.wrap(m.bytes());
  }

  @Override
  public boolean lastReadWaited() {
    return waited;
  }

  @Override
  public Lsn lastMessageLsn() {
    return lastMessage;
  }

  @Override
  public Lsn lastReceivedLsn() {
    return received;
  }

  @Override
  public synchronized boolean advanceFlushed(Lsn lsn) {
    if (!lsn.isAfter(flushed)) {
      return false;
    }
    flushed = lsn;
    confirmed.add(lsn);
    return true;
  }

  @Override
  public synchronized boolean sendStatusIfDue() {
    if (flushed.equals(lastSentFlushed)) {
      return false;
    }
    send("flush");
    return true;
  }

  @Override
  public synchronized void forceStatusUpdate() {
    send("forced");
  }

  private synchronized void send(String why) {
    lastSentFlushed = flushed;
    statuses.add(new Status(flushed, received, why));
  }

  @Override
  public String slotName() {
    return "scripted_slot";
  }

  @Override
  public void close() {
    closed = true;
  }

  boolean isClosed() {
    return closed;
  }
}
