package org.pgetl.destination.duckdb;

import org.junit.jupiter.api.Test;
import org.pgetl.testing.DocSnippets;

class EmbeddingSnippetTest {
  @Test
  void theDocsQuoteTheCompiledSnippetVerbatim() throws Exception {
    DocSnippets.assertQuoted(
        "src/test/java/org/pgetl/destination/duckdb/EmbeddingSnippet.java",
        "duckdb-embedding",
        "../docs/destinations.md",
        12);
  }
}
