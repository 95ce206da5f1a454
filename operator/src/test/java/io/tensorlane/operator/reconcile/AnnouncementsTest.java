package io.tensorlane.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A revision is announced once per deployment, again only after another revision. */
class AnnouncementsTest {
    @Test
    void oncePerRevisionAndDeployment() {
        Announcements a = new Announcements();
        assertThat(a.first("uid-1", "r1")).isTrue();
        assertThat(a.first("uid-1", "r1"))
                .as("applied again from a stale cache")
                .isFalse();
        assertThat(a.first("uid-2", "r1")).as("another deployment").isTrue();
        assertThat(a.first("uid-1", "r2")).as("a new revision").isTrue();
        assertThat(a.first("uid-1", "r1"))
                .as("a rollback to the earlier revision")
                .isTrue();
        assertThat(new Announcements().first("uid-1", "r1"))
                .as("a restarted operator")
                .isTrue();
    }
}
