package org.rudder.it;

/**
 * Reads one setting from a system property ({@code -Drudder.zk.address=...}) or,
 * failing that, from the environment ({@code RUDDER_ZK_ADDRESS}); the environment
 * name is the property name upper-cased with dots turned into underscores.
 */
final class Settings {

    private Settings() {
    }

    static String get(String property, String fallback) {
        String value = System.getProperty(property);
        if (value == null || value.isEmpty()) {
            value = System.getenv(property.toUpperCase().replace('.', '_'));
        }
        return value == null || value.isEmpty() ? fallback : value;
    }

    static int getInt(String property, int fallback) {
        String value = get(property, null);
        if (value == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(property + " must be an integer, got '" + value + "'", e);
        }
    }
}
