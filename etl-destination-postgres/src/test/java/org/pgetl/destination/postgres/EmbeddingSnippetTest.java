package org.pgetl.destination.postgres;

import org.junit.jupiter.api.Test;
import org.pgetl.testing.DocSnippets;

class EmbeddingSnippetTest {
  @Test
  void theDocsQuoteTheCompiledSnippetVerbatim() throws Exception {
    DocSnippets.assertQuoted(
        "src/test/java/org/pgetl/destination/postgres/EmbeddingSnippet.java",
        "mirror-embedding",
        "../docs/destinations.md",
        12);
  }
}
