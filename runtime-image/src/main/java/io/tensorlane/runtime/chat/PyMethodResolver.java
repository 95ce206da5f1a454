package io.tensorlane.runtime.chat;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/**
 * Resolves Python method calls on template values before Jinjava's own bean resolver sees them: {@code str}
 * methods ({@link PyStr}) on strings, {@code items()/keys()/values()/get(k[, default])} on dicts. Calls that
 * mutate a list or dict ({@code append}, {@code update}, ...) are refused as transformers' ImmutableSandboxedEnvironment
 * refuses them. Everything else falls through (property resolved stays false) to the next resolver.
 */
final class PyMethodResolver extends ELResolver {
    private static final Set<String> LIST_MUTATORS =
            Set.of("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse");
    private static final Set<String> DICT_MUTATORS = Set.of("update", "pop", "popitem", "setdefault", "clear");

    @Override
    public Object invoke(ELContext context, Object base, Object method, Class<?>[] paramTypes, Object[] params) {
        if (base == null || !(method instanceof String)) return null;
        String name = (String) method;
        Object[] args = params == null ? new Object[0] : params;
        if (base instanceof String || base.getClass().getSimpleName().equals("SafeString")) {
            Object r = PyStr.call(base.toString(), name, args);
            if (r == PyStr.NOT_A_STR_METHOD) return null;
            context.setPropertyResolved(true);
            return r;
        }
        if (base instanceof Map) {
            Map<?, ?> m = (Map<?, ?>) base;
            Object r;
            switch (name) {
                case "items": {
                    List<List<Object>> items = new ArrayList<>();
                    m.forEach((k, v) -> items.add(Arrays.asList(k, v)));
                    r = items;
                    break;
                }
                case "keys":
                    r = new ArrayList<>(m.keySet());
                    break;
                case "values":
                    r = new ArrayList<>(m.values());
                    break;
                case "get":
                    if (args.length < 1 || args.length > 2) return null;
                    r = m.containsKey(args[0]) ? m.get(args[0]) : args.length == 2 ? args[1] : null;
                    break;
                default:
                    if (DICT_MUTATORS.contains(name)) throw unsafe(name, "dict");
                    return null;
            }
            context.setPropertyResolved(true);
            return r;
        }
        if (base instanceof List && LIST_MUTATORS.contains(name)) throw unsafe(name, "list");
        return null;
    }

    private static ChatTemplateException unsafe(String name, String type) {
        return new ChatTemplateException(
                "SecurityError: access to attribute '" + name + "' of '" + type + "' object is unsafe.", false);
    }

    @Override
    public Object getValue(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public Class<?> getType(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public void setValue(ELContext context, Object base, Object property, Object value) {}

    @Override
    public boolean isReadOnly(ELContext context, Object base, Object property) {
        return true;
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
        return null;
    }

    @Override
    public Class<?> getCommonPropertyType(ELContext context, Object base) {
        return null;
    }
}
