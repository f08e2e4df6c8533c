#!/usr/bin/env python3
"""Writes SampleModel3+Templates.mom: Xcode's compiled SampleModel3.mom (../apple-compiled)
with a fetched property, a derived attribute, validation predicates, a partial fetch index,
two fetch request templates and two configurations added; SampleModel3+Composite.mom, the same with a composite attribute too
(which Apple's SQLite layout here does not keep); and hostile-*.mom, SampleModel3 with one
damage each that the reader must refuse with an error (and not loop or crash), archived with the keys Core Data's own encoders write
(Formats/compiled-model.md §2–2.3). No Xcode-written model with these features is at hand;
everything else in the file is as Xcode wrote it.

Run from this folder: python3 make-templates-mom.py"""
import plistlib
from plistlib import UID

SOURCE = "../apple-compiled/SampleModel.momd/SampleModel3.mom"
TARGET = "SampleModel3+Templates.mom"
COMPOSITE_TARGET = "SampleModel3+Composite.mom"

archive = plistlib.load(open(SOURCE, "rb"))
objects = archive["$objects"]
root = objects[archive["$top"]["root"].data]


def add(value):
    objects.append(value)
    return UID(len(objects) - 1)


classes = {}


def cls(*chain):
    if chain[0] not in classes:
        classes[chain[0]] = add({"$classname": chain[0], "$classes": list(chain) + ["NSObject"]})
    return classes[chain[0]]


def entity(name):
    table = objects[root["NSEntities"].data]
    for key, value in zip(table["NS.keys"], table["NS.objects"]):
        if objects[key.data] == name:
            return value
    raise KeyError(name)


def array(items):
    return add({"NS.objects": list(items), "$class": cls("NSArray")})


def dictionary(pairs):
    return add({"NS.keys": [add(k) for k, _ in pairs], "NS.objects": [v for _, v in pairs],
                "$class": cls("NSMutableDictionary", "NSDictionary")})


def key_path(path):
    specifier = add({"NSKeyPath": add(path), "NSExpressionType": 10, "$class": cls("NSKeyPathSpecifierExpression", "NSExpression")})
    evaluated = add({"NSExpressionType": 1, "$class": cls("NSSelfExpression", "NSExpression")})
    return add({"NSOperand": evaluated, "NSSelectorName": add("valueForKeyPath:"), "NSArguments": array([specifier]),
                "NSExpressionType": 3, "$class": cls("NSKeyPathExpression", "NSFunctionExpression", "NSExpression")})


def variable(name):
    return add({"NSVariable": add(name), "NSExpressionType": 2, "$class": cls("NSVariableExpression", "NSExpression")})


def constant(value):
    return add({"NSConstantValue": value, "NSExpressionType": 0, "$class": cls("NSConstantValueExpression", "NSExpression")})


def comparison(left, operator_type, right, operator_class="NSEqualityPredicateOperator"):
    operator = add({"NSOperatorType": operator_type, "NSModifier": 0, "NSOptions": 0,
                    "$class": cls(operator_class, "NSPredicateOperator")})
    return add({"NSLeftExpression": left, "NSRightExpression": right, "NSPredicateOperator": operator,
                "$class": cls("NSComparisonPredicate", "NSPredicate")})


def compound(kind, subpredicates):
    return add({"NSCompoundPredicateType": kind, "NSSubpredicates": array(subpredicates),
                "$class": cls("NSCompoundPredicate", "NSPredicate")})


def fetch_request(entity_value, predicate=None, limit=0, batch=0, flags=None, prefetching=None):
    request = {"NSEntity": entity_value, "NSPredicate": predicate or UID(0), "NSSortDescriptors": UID(0),
               "NSFetchLimit": limit, "NSFetchOffset": 0, "NSBatchSize": batch, "NSResultType": 0,
               "NSAllocationType": 0, "NSValuesToFetch": UID(0), "NSValuesToGroupBy": UID(0), "NSHavingPredicate": UID(0),
               "NSRelationshipKeyPathsForPrefetching": array(add(p) for p in prefetching) if prefetching else UID(0),
               "$class": cls("NSFetchRequest", "NSPersistentStoreRequest")}
    if flags is not None:
        request["NSHasFetchRequestFlags"] = True
        request["NSFetchRequestFlags"] = flags
    return add(request)


# Person.carsWithItsLastName: a fetched property (NSFetchedPropertyDescription's encoder writes
# the request and _NSFetchRequestEntityName).
person = entity("Person")
cars_request = fetch_request(
    entity("Car"),
    comparison(key_path("owner.lastName"), 4, add({"NSOperand": variable("FETCH_SOURCE"), "NSSelectorName": add("valueForKeyPath:"),
                                                   "NSArguments": array([add({"NSKeyPath": add("lastName"), "NSExpressionType": 10,
                                                                              "$class": cls("NSKeyPathSpecifierExpression", "NSExpression")})]),
                                                   "NSExpressionType": 3, "$class": cls("NSKeyPathExpression", "NSFunctionExpression", "NSExpression")})),
    flags=2 | 4 | 8 | 16)
fetched = add({"NSPropertyName": add("carsWithItsLastName"), "NSIsOptional": True, "NSEntity": person, "NSFetchRequest": cars_request,
               "_NSFetchRequestEntityName": add("Car"), "NSFlagsKey": 0, "$class": cls("NSFetchedPropertyDescription", "NSPropertyDescription")})
properties = objects[objects[person.data]["NSProperties"].data]
properties["NS.keys"].append(add("carsWithItsLastName"))
properties["NS.objects"].append(fetched)

# Person.carCount, derived from cars.@count (NSDerivedAttributeDescription: NSDerivationExpression),
# and Person.address, a composite of two strings (NSCompositeAttributeDescription: NSCompositeElements).
def attribute(name, attribute_type, owner, optional=True, chain=("NSAttributeDescription", "NSPropertyDescription"), **extra):
    fields = {"NSPropertyName": add(name), "NSAttributeType": attribute_type, "NSIsOptional": optional, "NSEntity": owner,
              "NSAttributeValueClassName": UID(0), "NSDefaultValue": UID(0), "NSValueTransformerName": UID(0), "NSFlagsKey": 0,
              "$class": cls(*chain)}
    fields.update(extra)
    return add(fields)


derived = attribute("carCount", 300, person, chain=("NSDerivedAttributeDescription", "NSAttributeDescription", "NSPropertyDescription"),
                    NSDerivationExpression=key_path("cars.@count"))
properties["NS.keys"].append(add("carCount"))
properties["NS.objects"].append(derived)

# Validation predicates with their warnings (NSPropertyDescription's encoder): Maker.name at least
# two characters long, reported with the error code momc writes for the editor's minimum length
# (NSValidationStringTooShortError); Person.firstName starting with a capital, with a message.
def validate(owner_name, attribute_name, predicates, warnings):
    table = objects[objects[entity(owner_name).data]["NSProperties"].data]
    for key, value in zip(table["NS.keys"], table["NS.objects"]):
        if objects[key.data] == attribute_name:
            objects[value.data]["NSValidationPredicates"] = array(predicates)
            objects[value.data]["NSValidationWarnings"] = array(warnings)
            return
    raise KeyError(attribute_name)


validate("Maker", "name", [comparison(key_path("length"), 3, constant(add(2)), "NSComparisonPredicateOperator")], [add(1670)])
evaluated = add({"NSExpressionType": 1, "$class": cls("NSSelfExpression", "NSExpression")})
validate("Person", "firstName", [comparison(evaluated, 6, constant(add("[A-Z].*")), "NSMatchingPredicateOperator")],
         [add("A first name starts with a capital")])

# A fetch index on Car.numberPlate for the cars that have an owner (NSFetchIndexDescription's
# encoder: NSIndexName, NSIndexElements, NSPartialIndexPredicate).
index_element = add({"NSPropertyName": add("numberPlate"), "NSFetchIndexElementType": 0, "NSAscending": True,
                     "$class": cls("NSFetchIndexElementDescription")})
owned = comparison(key_path("owner"), 5, constant(UID(0)), "NSEqualityPredicateOperator")
objects[entity("Car").data]["NSFetchIndexDescriptions"] = array([add({
    "NSIndexName": add("byPlateWhenOwned"), "NSIndexElements": array([index_element]), "NSPartialIndexPredicate": owned,
    "$class": cls("NSFetchIndexDescription")})])

# Two templates: one with variables, a limit, flags and prefetching; one naming its entity
# by name only (the lazy form, NSEntity a string) with no flags.
plate = compound(1, [comparison(key_path("numberPlate"), 4, variable("PLATE")),
                     comparison(key_path("model"), 99, constant(add("GT")), "NSSubstringPredicateOperator")])
templates = dictionary([
    ("carsWithPlate", fetch_request(entity("Car"), plate, limit=5, batch=20, flags=1 | 2 | 4 | 16, prefetching=["owner", "createdBy"])),
    ("everyone", fetch_request(add("Person"))),
    ("carsAsFaultsOnly", fetch_request(entity("Car"), flags=8)),
])
root["NSFetchRequestTemplates"] = templates

# Configurations: name → NSSet of entities (NSManagedObjectModel's encoder; the default
# configuration is left out).
def entity_set(names):
    return add({"NS.objects": [entity(n) for n in names], "$class": cls("NSSet")})


root["NSConfigurations"] = dictionary([("Vehicles", entity_set(["Car", "SportCar", "LuxuryCar", "Maker"])),
                                       ("People", entity_set(["Person"]))])

with open(TARGET, "wb") as out:
    plistlib.dump(archive, out, fmt=plistlib.FMT_BINARY, sort_keys=False)
print("wrote", TARGET, len(objects), "objects")

elements = array([attribute("city", 700, UID(0)), attribute("zip", 700, UID(0))])
composite = attribute("address", 2100, person, chain=("NSCompositeAttributeDescription", "NSAttributeDescription", "NSPropertyDescription"),
                      NSCompositeElements=elements)
properties["NS.keys"].append(add("address"))
properties["NS.objects"].append(composite)
with open(COMPOSITE_TARGET, "wb") as out:
    plistlib.dump(archive, out, fmt=plistlib.FMT_BINARY, sort_keys=False)
print("wrote", COMPOSITE_TARGET, len(objects), "objects")


# Hostile variants, each from a fresh copy of Apple's file.
def fresh():
    global archive, objects, root, classes
    archive = plistlib.load(open(SOURCE, "rb"))
    objects = archive["$objects"]
    root = objects[archive["$top"]["root"].data]
    classes = {}


def write(name):
    with open(name, "wb") as out:
        plistlib.dump(archive, out, fmt=plistlib.FMT_BINARY, sort_keys=False)
    print("wrote", name)


def add_property(owner_name, name, value):
    table = objects[objects[entity(owner_name).data]["NSProperties"].data]
    table["NS.keys"].append(add(name))
    table["NS.objects"].append(value)


composite_chain = ("NSCompositeAttributeDescription", "NSAttributeDescription", "NSPropertyDescription")

# 12 levels of four composites that all share the next level's list: 4^12 element reads if
# nothing counted them.
fresh()
level = array([attribute("leaf%d" % i, 700, UID(0)) for i in range(4)])
for depth in range(12):
    level = array([attribute("c%d_%d" % (depth, i), 2100, UID(0), chain=composite_chain, NSCompositeElements=level) for i in range(4)])
add_property("Person", "shared", attribute("shared", 2100, entity("Person"), chain=composite_chain, NSCompositeElements=level))
write("hostile-shared-composites.mom")

# A composite among its own elements.
fresh()
selfish = attribute("selfish", 2100, entity("Person"), chain=composite_chain)
objects[selfish.data]["NSCompositeElements"] = array([selfish])
add_property("Person", "selfish", selfish)
write("hostile-composite-in-itself.mom")

# A template naming no entity.
fresh()
root["NSFetchRequestTemplates"] = dictionary([("nowhere", fetch_request(UID(0)))])
write("hostile-template-without-entity.mom")

# A fetch request whose NSEntity is an attribute.
fresh()
table = objects[objects[entity("Person").data]["NSProperties"].data]
root["NSFetchRequestTemplates"] = dictionary([("odd", fetch_request(table["NS.objects"][0]))])
write("hostile-template-entity-is-an-attribute.mom")

# A configuration holding an attribute.
fresh()
root["NSConfigurations"] = dictionary([("Odd", add({"NS.objects": [table["NS.objects"][0]], "$class": cls("NSSet")}))])
write("hostile-configuration-member.mom")

# Validation warnings that are neither messages nor codes.
fresh()
validate("Maker", "name", [comparison(key_path("length"), 3, constant(add(2)))], [dictionary([("a", add("b"))])])
write("hostile-validation-warning.mom")

# A fetched property with neither a request nor an entity name.
fresh()
add_property("Person", "lost", add({"NSPropertyName": add("lost"), "NSIsOptional": True, "NSEntity": entity("Person"),
                                     "NSFetchRequest": UID(0), "NSFlagsKey": 0, "$class": cls("NSFetchedPropertyDescription", "NSPropertyDescription")}))
write("hostile-fetched-property-without-request.mom")
