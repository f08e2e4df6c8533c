// AND, OR, NOT in both spellings, grouping, TRUEPREDICATE and FALSEPREDICATE.
@testable import CoreDataPredicate

extension FormatTable {
    private static let over30 = cmp(key("age"), .greaterThan, const(30))
    private static let under60 = cmp(key("age"), .lessThan, const(60))
    private static let active = cmp(key("isActive"), .equalTo, const(true))

    static let logic: [FormatCase] = [
        FormatCase("age > 30 AND age < 60", tree: and(over30, under60), printed: "age > 30 AND age < 60", selects: ["Ada", "Carol", "Éva"]),
        FormatCase("age > 30 && age < 60", tree: and(over30, under60), printed: "age > 30 AND age < 60", selects: ["Ada", "Carol", "Éva"]),
        FormatCase("age>30&&age<60", tree: and(over30, under60), printed: "age > 30 AND age < 60", selects: ["Ada", "Carol", "Éva"]),
        FormatCase("age > 30 and age < 60", tree: and(over30, under60), printed: "age > 30 AND age < 60", selects: ["Ada", "Carol", "Éva"]),
        FormatCase("age > 30\n\tAnD age < 60", tree: and(over30, under60), printed: "age > 30 AND age < 60", selects: ["Ada", "Carol", "Éva"]),
        FormatCase("age < 20 OR age > 80", tree: or(cmp(key("age"), .lessThan, const(20)), cmp(key("age"), .greaterThan, const(80))),
                   printed: "age < 20 OR age > 80", selects: ["Dan", "Grace"]),
        FormatCase("age < 20 || age > 80", tree: or(cmp(key("age"), .lessThan, const(20)), cmp(key("age"), .greaterThan, const(80))),
                   printed: "age < 20 OR age > 80", selects: ["Dan", "Grace"]),
        FormatCase("NOT age > 30", tree: not(over30), printed: "NOT age > 30", selects: ["Bob", "Dan", "Hana"]),
        FormatCase("not age > 30", tree: not(over30), printed: "NOT age > 30", selects: ["Bob", "Dan", "Hana"]),
        FormatCase("!(age > 30)", tree: not(over30), printed: "NOT age > 30", selects: ["Bob", "Dan", "Hana"]),
        FormatCase("! age > 30", tree: not(over30), printed: "NOT age > 30", selects: ["Bob", "Dan", "Hana"]),
        FormatCase("NOT NOT age > 30", tree: not(not(over30)), printed: "NOT NOT age > 30", selects: ["Ada", "Carol", "Éva", "frank", "Grace"]),
        FormatCase("NOT (age > 30 AND isActive == YES)", tree: not(and(over30, active)), printed: "NOT (age > 30 AND isActive == 1)",
                   selects: ["Bob", "Dan", "Éva", "Grace", "Hana"]),
        FormatCase("NOT age > 30 AND isActive == YES", tree: and(not(over30), active), printed: "NOT age > 30 AND isActive == 1",
                   selects: ["Dan", "Hana"]),
        FormatCase("age > 30 AND isActive == YES OR name == 'Bob'",
                   tree: or(and(over30, active), cmp(key("name"), .equalTo, const("Bob"))),
                   printed: "(age > 30 AND isActive == 1) OR name == \"Bob\"", selects: ["Ada", "Bob", "Carol", "frank"]),
        FormatCase("name == 'Bob' OR age > 30 AND isActive == YES",
                   tree: or(cmp(key("name"), .equalTo, const("Bob")), and(over30, active)),
                   printed: "name == \"Bob\" OR (age > 30 AND isActive == 1)", selects: ["Ada", "Bob", "Carol", "frank"]),
        FormatCase("age > 30 AND (isActive == YES OR name == 'Éva')",
                   tree: and(over30, or(active, cmp(key("name"), .equalTo, const("Éva")))),
                   printed: "age > 30 AND (isActive == 1 OR name == \"Éva\")", selects: ["Ada", "Carol", "Éva", "frank"]),
        FormatCase("(age > 30 AND isActive == YES) AND name BEGINSWITH 'C'",
                   tree: and(and(over30, active), cmp(key("name"), .beginsWith, const("C"))),
                   printed: "(age > 30 AND isActive == 1) AND name BEGINSWITH \"C\"", selects: ["Carol"]),
        FormatCase("age > 30 AND isActive == YES AND name BEGINSWITH 'C'",
                   tree: and(over30, active, cmp(key("name"), .beginsWith, const("C"))),
                   printed: "age > 30 AND isActive == 1 AND name BEGINSWITH \"C\"", selects: ["Carol"]),
        FormatCase("name == 'Ada' OR name == 'Bob' OR name == 'Carol'",
                   tree: or(cmp(key("name"), .equalTo, const("Ada")), cmp(key("name"), .equalTo, const("Bob")),
                            cmp(key("name"), .equalTo, const("Carol"))),
                   printed: "name == \"Ada\" OR name == \"Bob\" OR name == \"Carol\"", selects: ["Ada", "Bob", "Carol"]),
        FormatCase("((age > 30))", tree: over30, printed: "age > 30", selects: ["Ada", "Carol", "Éva", "frank", "Grace"]),
        FormatCase("TRUEPREDICATE", tree: NSPredicate(value: true), printed: "TRUEPREDICATE", selects: everyone),
        FormatCase("FALSEPREDICATE", tree: NSPredicate(value: false), printed: "FALSEPREDICATE", selects: nobody),
        FormatCase("truepredicate AND age > 80", tree: and(NSPredicate(value: true), cmp(key("age"), .greaterThan, const(80))),
                   printed: "TRUEPREDICATE AND age > 80", selects: ["Grace"]),
        FormatCase("FALSEPREDICATE OR age > 80", tree: or(NSPredicate(value: false), cmp(key("age"), .greaterThan, const(80))),
                   printed: "FALSEPREDICATE OR age > 80", selects: ["Grace"]),
        FormatCase("NOT FALSEPREDICATE", tree: not(NSPredicate(value: false)), printed: "NOT FALSEPREDICATE", selects: everyone),
    ]
}
