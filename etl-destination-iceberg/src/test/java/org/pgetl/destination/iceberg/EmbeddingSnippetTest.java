package org.pgetl.destination.iceberg;

import org.junit.jupiter.api.Test;
import org.pgetl.testing.DocSnippets;

class EmbeddingSnippetTest {
  @Test
  void theDocsQuoteTheCompiledSnippetVerbatim() throws Exception {
    DocSnippets.assertQuoted(
        "src/test/java/org/pgetl/destination/iceberg/EmbeddingSnippet.java",
        "iceberg-embedding",
        "../docs/destinations.md",
        16);
  }
}
