package io.tensorlane.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The engine env contract: every name is distinct and follows TENSORLANE_ + constant name. */
class EngineEnvTest {
    static List<Field> names() {
        return Arrays.stream(EngineEnv.class.getDeclaredFields())
                .filter(f -> Modifier.isStatic(f.getModifiers()) && f.getType() == String.class)
                .toList();
    }

    static String value(Field f) {
        try {
            return (String) f.get(null);
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void namesAreDistinctAndPrefixed() {
        List<Field> fields = names();
        assertThat(fields).hasSizeGreaterThanOrEqualTo(12);
        assertThat(fields).allSatisfy(f -> {
            assertThat(Modifier.isPublic(f.getModifiers()) && Modifier.isFinal(f.getModifiers()))
                    .as(f.getName())
                    .isTrue();
            assertThat(value(f)).isEqualTo("TENSORLANE_" + f.getName());
        });
        assertThat(fields.stream().map(EngineEnvTest::value)).doesNotHaveDuplicates();
    }
}
