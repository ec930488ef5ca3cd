package org.pgetl.testkit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.pgetl.model.Event;
import org.pgetl.model.Lsn;
import org.pgetl.model.OldRow;
import org.pgetl.model.ReplicatedTableSchema;
import org.pgetl.model.TableRow;
import org.pgetl.model.TableRow.WireFormat;
import org.pgetl.testkit.destination.SchemaBuilder;

class WireFormsTest {
  private static final ReplicatedTableSchema T =
      SchemaBuilder.table(1, "s.t").key("id", "int8").column("v", "text").build();

  @Test
  void copiedRowsCarryTheBinaryFormAndDecodeToTheSameValues() {
    TableRow row = WireForms.copied(T, List.of(TableRow.of(-7L, "é x"))).get(0);
    assertThat(row.wireFormat(0)).isEqualTo(WireFormat.BINARY);
    assertThat(row.wireValue(0).remaining()).isEqualTo(8);
    assertThat(row.getLong(0)).isEqualTo(-7L);
    assertThat(row.getString(1)).isEqualTo("é x");
    assertThat(row).isEqualTo(TableRow.of(-7L, "é x"));
  }

  @Test
  void streamedRowsCarryTheTextFormAndNullsStayNull() {
    Event.Insert in = new Event.Insert(Lsn.of(1), Lsn.of(2), 0, T, TableRow.of(42L, null));
    Event.Delete del =
        new Event.Delete(Lsn.of(3), Lsn.of(4), 0, T, new OldRow.Key(TableRow.of(42L)));
    List<Event> sent = WireForms.streamed(List.of(in, del));
    TableRow row = ((Event.Insert) sent.get(0)).row();
    assertThat(row.wireFormat(0)).isEqualTo(WireFormat.TEXT);
    assertThat(row.wireValue(0)).isEqualTo(java.nio.ByteBuffer.wrap("42".getBytes()));
    assertThat(row.isNull(1)).isTrue();
    assertThat(row.wireFormat(1)).isNull();
    assertThat(row.get(0)).isEqualTo(42L);
    TableRow key = ((Event.Delete) sent.get(1)).oldRow().row();
    assertThat(key.wireFormat(0)).isEqualTo(WireFormat.TEXT);
    assertThat(key.getLong(0)).isEqualTo(42L);
  }

  @Test
  void aValueOfAnotherTypeLeavesTheRowAsItIs() {
    TableRow row = TableRow.of("not a long", "v");
    assertThat(WireForms.copied(T, List.of(row)).get(0)).isSameAs(row);
  }
}
