package org.pgetl.core.internal.engine;

import org.pgetl.core.internal.decode.StreamingMode;

/**
 * The pgoutput options every stream of a generation uses, decided once at its start from the
 * configuration and the server.
 *
 * @param protocolVersion the pgoutput protocol version
 * @param binary whether values come in binary form
 * @param streaming whether large in-progress transactions are streamed
 * @param messages whether user logical messages are sent
 */
public record StreamSettings(
    int protocolVersion, boolean binary, StreamingMode streaming, boolean messages) {}
