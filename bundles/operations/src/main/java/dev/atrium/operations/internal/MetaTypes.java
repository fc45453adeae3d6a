package dev.atrium.operations.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.osgi.framework.Bundle;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * The MetaType descriptions ({@code OSGI-INF/metatype/*.xml}, written by bnd from {@code @ObjectClassDefinition}) of
 * the Atrium bundles, by the PID they designate. Read from the bundles' entries, not from a MetaType service: the
 * runtime has none, and the documents are all the console needs (names, types, descriptions, defaults).
 */
final class MetaTypes {

    /** One attribute: its MetaType type ({@code String}, {@code Long}, {@code Password}, …) and default. */
    record Attribute(String id, String name, String type, String description, List<String> defaults, int cardinality) {

        boolean secret() {
            String lower = id.toLowerCase(java.util.Locale.ROOT);
            return type.equals("Password")
                    || lower.contains("key")
                    || lower.contains("secret")
                    || lower.contains("token")
                    || lower.contains("password");
        }

        /** The default as the component sees it: one value, a list for a multi-valued attribute, null for none. */
        Object defaultValue() {
            if (defaults == null) {
                return null;
            }
            return cardinality == 0 ? (defaults.isEmpty() ? null : defaults.get(0)) : defaults;
        }
    }

    /** A designated PID: the names of the definitions designating it and their attributes, merged by id. */
    record Pid(String pid, String name, String description, Map<String, Attribute> attributes) {}

    private MetaTypes() {}

    /** The designated (non-factory) PIDs starting with {@code dev.atrium.} of the given bundles, sorted. */
    static Map<String, Pid> read(Bundle[] bundles) {
        Map<String, Pid> pids = new TreeMap<>();
        for (Bundle bundle : bundles) {
            String bsn = bundle.getSymbolicName();
            if (bsn == null || !bsn.startsWith("dev.atrium.") || bundle.getState() == Bundle.UNINSTALLED) {
                continue;
            }
            Enumeration<URL> entries = bundle.findEntries("OSGI-INF/metatype", "*.xml", false);
            while (entries != null && entries.hasMoreElements()) {
                URL entry = entries.nextElement();
                try (InputStream in = entry.openStream()) {
                    add(pids, parser().parse(in));
                } catch (IOException | SAXException | ParserConfigurationException e) {
                    // a document that cannot be read describes nothing; its PID still shows once configured
                }
            }
        }
        return pids;
    }

    private static DocumentBuilder parser() throws ParserConfigurationException {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
        factory.setExpandEntityReferences(false);
        return factory.newDocumentBuilder();
    }

    private static void add(Map<String, Pid> pids, Document document) {
        Map<String, Element> ocds = new LinkedHashMap<>();
        NodeList ocdNodes = document.getElementsByTagName("OCD");
        for (int i = 0; i < ocdNodes.getLength(); i++) {
            Element ocd = (Element) ocdNodes.item(i);
            ocds.put(ocd.getAttribute("id"), ocd);
        }
        NodeList designates = document.getElementsByTagName("Designate");
        for (int i = 0; i < designates.getLength(); i++) {
            Element designate = (Element) designates.item(i);
            String pid = designate.getAttribute("pid");
            if (pid.isEmpty() || !designate.getAttribute("factoryPid").isEmpty() || !pid.startsWith("dev.atrium.")) {
                continue;
            }
            NodeList objects = designate.getElementsByTagName("Object");
            for (int j = 0; j < objects.getLength(); j++) {
                Element ocd = ocds.get(((Element) objects.item(j)).getAttribute("ocdref"));
                if (ocd != null) {
                    merge(pids, pid, ocd);
                }
            }
        }
    }

    /** Several components may share a PID (each with its own definition): their names join, the first attribute wins. */
    private static void merge(Map<String, Pid> pids, String pid, Element ocd) {
        Pid known = pids.get(pid);
        Map<String, Attribute> attributes = known == null ? new LinkedHashMap<>() : known.attributes();
        NodeList ads = ocd.getElementsByTagName("AD");
        for (int i = 0; i < ads.getLength(); i++) {
            Element ad = (Element) ads.item(i);
            String cardinality = ad.getAttribute("cardinality");
            attributes.putIfAbsent(
                    ad.getAttribute("id"),
                    new Attribute(
                            ad.getAttribute("id"),
                            ad.getAttribute("name"),
                            ad.getAttribute("type").isEmpty() ? "String" : ad.getAttribute("type"),
                            ad.getAttribute("description"),
                            ad.hasAttribute("default") ? split(ad.getAttribute("default")) : null,
                            cardinality.isEmpty() ? 0 : Integer.parseInt(cardinality)));
        }
        String name = ocd.getAttribute("name");
        String description = ocd.getAttribute("description");
        if (known != null) {
            name = known.name().contains(name) ? known.name() : known.name() + "; " + name;
            description = known.description().isEmpty() ? description : known.description();
        }
        pids.put(pid, new Pid(pid, name, description, attributes));
    }

    /** A MetaType default: values separated by commas, a comma in a value escaped with a backslash. */
    static List<String> split(String text) {
        List<String> values = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\\' && i + 1 < text.length()) {
                current.append(text.charAt(++i));
            } else if (c == ',') {
                values.add(current.toString().trim());
                current.setLength(0);
            } else {
                current.append(c);
            }
        }
        values.add(current.toString().trim());
        return values;
    }
}
