package org.pgetl.core.internal.pg;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SecretsTest {

  @Test
  void masksTheUserInfoPasswordAndEveryPasswordParameter() {
    assertThat(
            Secrets.redactUrl(
                "jdbc:postgresql://u:pw@h:5432/d?sslPassword=a&PASSWORD=b&user=u&my_password_2=c"))
        .isEqualTo(
            "jdbc:postgresql://u:***@h:5432/d?sslPassword=***&PASSWORD=***&user=u&my_password_2=***");
  }

  @Test
  void leavesAUrlWithoutPasswordsAsItIs() {
    String url = "postgresql://u@h1:5432,h2:5433/d?targetServerType=primary";
    assertThat(Secrets.redactUrl(url)).isEqualTo(url);
    assertThat(Secrets.redactUrl(null)).isNull();
  }

  @Test
  void anAtSignInTheQueryIsNotTakenForUserInfo() {
    assertThat(Secrets.redactUrl("postgresql://h/d?options=a:b@c&password=x"))
        .isEqualTo("postgresql://h/d?options=a:b@c&password=***");
  }

  @Test
  void scrubsAKnownSecretAndShowsASettingMasked() {
    assertThat(Secrets.scrub("auth failed for hunter2 (hunter2)", "hunter2"))
        .isEqualTo("auth failed for *** (***)");
    assertThat(Secrets.scrub("text", "")).isEqualTo("text");
    assertThat(Secrets.show(null)).isEqualTo("null");
    assertThat(Secrets.show("x")).isEqualTo("***");
  }
}
