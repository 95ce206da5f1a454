package io.tensorlane.runtime.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class EngineSettingsTest {
    @Test
    void prefixCachingIsOnUnlessTheVariableSaysFalse() {
        String v = EngineSettings.PREFIX_CACHING;
        assertThat(v).isEqualTo("TENSORLANE_PREFIX_CACHING");
        assertThat(EngineSettings.envBoolean(Map.of(), v, true)).isTrue();
        assertThat(EngineSettings.envBoolean(Map.of(v, " "), v, true)).isTrue();
        assertThat(EngineSettings.envBoolean(Map.of(v, "false"), v, true)).isFalse();
        assertThat(EngineSettings.envBoolean(Map.of(v, "FALSE"), v, true)).isFalse();
        assertThat(EngineSettings.envBoolean(Map.of(v, "True"), v, false)).isTrue();
        assertThatThrownBy(() -> EngineSettings.envBoolean(Map.of(v, "off"), v, true))
                .hasMessage("TENSORLANE_PREFIX_CACHING must be true or false, got 'off'");
    }

    @Test
    void theKvAuditIsOffUnlessTheVariableSaysTrue() {
        String v = EngineSettings.KV_AUDIT;
        assertThat(v).isEqualTo("TENSORLANE_KV_AUDIT");
        assertThat(EngineSettings.envBoolean(Map.of(), v, false)).isFalse();
        assertThat(EngineSettings.envBoolean(Map.of(v, "true"), v, false)).isTrue();
        assertThatThrownBy(() -> EngineSettings.envBoolean(Map.of(v, "1"), v, false))
                .hasMessage("TENSORLANE_KV_AUDIT must be true or false, got '1'");
    }
}
