package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.List;


/**
 * Where a request goes: its {@link Operation} and the path's variables (entity or subscription
 * id, attribute name - or, for discovery, the type or attribute name -, context id),
 * percent-decoded. {@link #match} finds it, or says which methods the path
 * would take (405), or that no resource has that path (404).
 */
record Route(Operation operation, String entityId, String attribute, String contextId, String instanceId) {

    Route(Operation operation, String entityId, String attribute, String contextId) {
        this(operation, entityId, attribute, contextId, null);
    }

    /** The outcome of matching a path: a route, or the methods it allows, or nothing. */
    record Match(Route route, String allow, String unsupported) {
    }

    /** Resources of the specification the broker does not serve (yet): 501, not 404. */
    private static final List<String> UNSUPPORTED = List.of("entityMaps", "snapshots", "info");

    /** Where the sources a subscription was forwarded to send their notifications (§ 5.8.1.4). */
    static final String REMOTE_NOTIFY_PATH = "/ngsi-ld/ex/remote-notify";
    private static final String BASE_WITHOUT_SLASH = NgsildApplication.BASE_PATH.substring(0, NgsildApplication.BASE_PATH.length() - 1);

    /**
     * Whether {@code path} is the broker's: its resources under {@link NgsildApplication#BASE_PATH} (and
     * that path without its slash) and {@link #REMOTE_NOTIFY_PATH}. The one definition: a host
     * that mounts the broker beside routes of its own routes by it (the embedding API's {@code CorNgsild.handles}).
     */
    static boolean owns(String path) {
        return path.startsWith(NgsildApplication.BASE_PATH) || path.equals(REMOTE_NOTIFY_PATH) || path.equals(BASE_WITHOUT_SLASH);
    }

    static Match match(String method, String path) {
        if (path.equals(REMOTE_NOTIFY_PATH)) {
            return pick(method, "POST", method.equals("POST") ? new Route(Operation.REMOTE_NOTIFY, null, null, null) : null);
        }
        if (!path.startsWith(NgsildApplication.BASE_PATH)) {
            return new Match(null, null, null);
        }
        List<String> s = segments(path.substring(NgsildApplication.BASE_PATH.length()));
        if (s == null || s.isEmpty()) {
            return new Match(null, null, null);
        }
        String head = s.get(0);
        int n = s.size();
        // an empty segment past the entity id is no resource; the temporal API's ids sit one
        // segment further (temporal/entities/{id}/attrs/{attrId}/{instanceId}), where an empty
        // id, attribute or instance is the operation's 400, as an empty entity id is
        if (head.isEmpty() || (n > 2 && !head.equals("temporal") && s.subList(2, n).contains(""))) {
            return new Match(null, null, null);
        }
        switch (head) {
            case "entities" -> {
                if (n == 1) {
                    return pick(method, "GET, POST, DELETE", switch (method) {
                        case "POST" -> new Route(Operation.CREATE_ENTITY, null, null, null);
                        case "GET" -> new Route(Operation.QUERY_ENTITIES, null, null, null);
                        case "DELETE" -> new Route(Operation.PURGE_ENTITIES, null, null, null);
                        default -> null;
                    });
                }
                String id = s.get(1);
                if (n == 2) {
                    return pick(method, "GET, PUT, PATCH, DELETE", switch (method) {
                        case "GET" -> new Route(Operation.RETRIEVE_ENTITY, id, null, null);
                        case "PUT" -> new Route(Operation.REPLACE_ENTITY, id, null, null);
                        case "PATCH" -> new Route(Operation.MERGE_ENTITY, id, null, null);
                        case "DELETE" -> new Route(Operation.DELETE_ENTITY, id, null, null);
                        default -> null;
                    });
                }
                if (!s.get(2).equals("attrs")) {
                    return new Match(null, null, null);
                }
                if (n == 3) {
                    return pick(method, "POST, PATCH", switch (method) {
                        case "POST" -> new Route(Operation.APPEND_ATTRIBUTES, id, null, null);
                        case "PATCH" -> new Route(Operation.UPDATE_ATTRIBUTES, id, null, null);
                        default -> null;
                    });
                }
                if (n == 4) {
                    String attr = s.get(3);
                    return pick(method, "PATCH, PUT, DELETE", switch (method) {
                        case "PATCH" -> new Route(Operation.PARTIAL_ATTRIBUTE_UPDATE, id, attr, null);
                        case "PUT" -> new Route(Operation.REPLACE_ATTRIBUTE, id, attr, null);
                        case "DELETE" -> new Route(Operation.DELETE_ATTRIBUTE, id, attr, null);
                        default -> null;
                    });
                }
                return new Match(null, null, null);
            }
            case "entityOperations" -> {
                if (n != 2) {
                    return new Match(null, null, null);
                }
                Operation op = switch (s.get(1)) {
                    case "create" -> Operation.BATCH_CREATE;
                    case "upsert" -> Operation.BATCH_UPSERT;
                    case "update" -> Operation.BATCH_UPDATE;
                    case "delete" -> Operation.BATCH_DELETE;
                    case "merge" -> Operation.BATCH_MERGE;
                    case "query" -> Operation.QUERY_ENTITIES_POST;
                    default -> null;
                };
                if (op == null) {
                    return new Match(null, null, null);
                }
                return pick(method, "POST", method.equals("POST") ? new Route(op, null, null, null) : null);
            }
            case "types", "attributes" -> {
                // discovery (5.7.5-5.7.10): the path's type or attribute name rides in the attribute slot
                boolean types = head.equals("types");
                if (n == 1) {
                    return pick(method, "GET", method.equals("GET")
                            ? new Route(types ? Operation.LIST_TYPES : Operation.LIST_ATTRIBUTES, null, null, null) : null);
                }
                if (n == 2) {
                    return pick(method, "GET", method.equals("GET")
                            ? new Route(types ? Operation.RETRIEVE_TYPE : Operation.RETRIEVE_ATTRIBUTE, null, s.get(1), null) : null);
                }
                return new Match(null, null, null);
            }
            case "subscriptions" -> {
                if (n == 1) {
                    return pick(method, "GET, POST", switch (method) {
                        case "GET" -> new Route(Operation.QUERY_SUBSCRIPTIONS, null, null, null);
                        case "POST" -> new Route(Operation.CREATE_SUBSCRIPTION, null, null, null);
                        default -> null;
                    });
                }
                if (n == 2) {
                    String id = s.get(1);
                    return pick(method, "GET, PATCH, DELETE", switch (method) {
                        case "GET" -> new Route(Operation.RETRIEVE_SUBSCRIPTION, id, null, null);
                        case "PATCH" -> new Route(Operation.UPDATE_SUBSCRIPTION, id, null, null);
                        case "DELETE" -> new Route(Operation.DELETE_SUBSCRIPTION, id, null, null);
                        default -> null;
                    });
                }
                return new Match(null, null, null);
            }
            case "csourceRegistrations", "csourceSubscriptions" -> {
                boolean regs = head.equals("csourceRegistrations");
                if (n == 1) {
                    return pick(method, "GET, POST", switch (method) {
                        case "GET" -> new Route(regs ? Operation.QUERY_CSR : Operation.QUERY_CSR_SUBSCRIPTIONS, null, null, null);
                        case "POST" -> new Route(regs ? Operation.CREATE_CSR : Operation.CREATE_CSR_SUBSCRIPTION, null, null, null);
                        default -> null;
                    });
                }
                if (n == 2) {
                    String id = s.get(1);
                    return pick(method, "GET, PATCH, DELETE", switch (method) {
                        case "GET" -> new Route(regs ? Operation.RETRIEVE_CSR : Operation.RETRIEVE_CSR_SUBSCRIPTION, id, null, null);
                        case "PATCH" -> new Route(regs ? Operation.UPDATE_CSR : Operation.UPDATE_CSR_SUBSCRIPTION, id, null, null);
                        case "DELETE" -> new Route(regs ? Operation.DELETE_CSR : Operation.DELETE_CSR_SUBSCRIPTION, id, null, null);
                        default -> null;
                    });
                }
                return new Match(null, null, null);
            }
            case "temporal" -> {
                return temporal(method, s.subList(1, n));
            }
            case "jsonldContexts" -> {
                if (n == 1) {
                    return pick(method, "GET, POST", switch (method) {
                        case "GET" -> new Route(Operation.LIST_CONTEXTS, null, null, null);
                        case "POST" -> new Route(Operation.ADD_CONTEXT, null, null, null);
                        default -> null;
                    });
                }
                if (n == 2) {
                    String id = s.get(1);
                    return pick(method, "GET, DELETE", switch (method) {
                        case "GET" -> new Route(Operation.SERVE_CONTEXT, null, null, id);
                        case "DELETE" -> new Route(Operation.DELETE_CONTEXT, null, null, id);
                        default -> null;
                    });
                }
                return new Match(null, null, null);
            }
            default -> {
                return new Match(null, null, UNSUPPORTED.contains(head) ? head : null);
            }
        }
    }

    /** The temporal API's resources (§ 6.18-6.22): {@code s} is the path after {@code temporal/}. */
    private static Match temporal(String method, List<String> s) {
        int n = s.size();
        if (n == 0) {
            return new Match(null, null, null);
        }
        if (s.get(0).equals("entityOperations")) {
            if (n != 2 || !s.get(1).equals("query")) {
                return new Match(null, null, null);
            }
            return pick(method, "POST", method.equals("POST") ? new Route(Operation.QUERY_TEMPORAL_POST, null, null, null) : null);
        }
        if (!s.get(0).equals("entities")) {
            return new Match(null, null, null);
        }
        if (n == 1) {
            return pick(method, "GET, POST", switch (method) {
                case "GET" -> new Route(Operation.QUERY_TEMPORAL, null, null, null);
                case "POST" -> new Route(Operation.CREATE_TEMPORAL, null, null, null);
                default -> null;
            });
        }
        String id = s.get(1);
        if (n == 2) {
            return pick(method, "GET, DELETE", switch (method) {
                case "GET" -> new Route(Operation.RETRIEVE_TEMPORAL, id, null, null);
                case "DELETE" -> new Route(Operation.DELETE_TEMPORAL, id, null, null);
                default -> null;
            });
        }
        if (!s.get(2).equals("attrs")) {
            return new Match(null, null, null);
        }
        if (n == 3) {
            return pick(method, "POST", method.equals("POST") ? new Route(Operation.APPEND_TEMPORAL, id, null, null) : null);
        }
        String attr = s.get(3);
        if (n == 4) {
            return pick(method, "DELETE", method.equals("DELETE") ? new Route(Operation.DELETE_TEMPORAL_ATTRIBUTE, id, attr, null)
                    : null);
        }
        if (n == 5) {
            String instance = s.get(4);
            return pick(method, "PATCH, DELETE", switch (method) {
                case "PATCH" -> new Route(Operation.MODIFY_INSTANCE, id, attr, null, instance);
                case "DELETE" -> new Route(Operation.DELETE_INSTANCE, id, attr, null, instance);
                default -> null;
            });
        }
        return new Match(null, null, null);
    }

    private static Match pick(String method, String allow, Route route) {
        return route != null ? new Match(route, null, null) : new Match(null, allow, null);
    }

    /**
     * The path's segments, each percent-decoded as UTF-8 ({@code +} stays a plus: this is a path),
     * a trailing slash ignored, an empty one kept (an entity id left out is the operation's 400);
     * {@code null} when an escape is malformed.
     */
    static List<String> segments(String rest) {
        List<String> out = new ArrayList<>(4);
        int start = 0;
        int len = rest.length();
        if (len > 0 && rest.charAt(len - 1) == '/') {
            len--;
        }
        if (len == 0) {
            return out;
        }
        while (start <= len) {
            int slash = rest.indexOf('/', start);
            int end = slash < 0 || slash > len ? len : slash;
            String seg = PercentEncoding.decode(rest.substring(start, end));
            if (seg == null) {
                return null;
            }
            out.add(seg);
            start = end + 1;
        }
        return out;
    }
}
