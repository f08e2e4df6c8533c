import CoreDataModel
import CoreDataStorage
import Foundation

extension NSManagedObject {
    func modelValidationForDelete() throws {
        var errors: [NSError] = []
        for relationship in entity.relationshipsByName.values.sorted(by: { $0.name < $1.name }) where relationship.deleteRule == .denyDeleteRule {
            materialise(relationship)
            let remaining = relationship.isToMany
                ? (toManyValues[relationship.name] ?? []).filter { !$0.isDeleted }
                : [toOneValues[relationship.name]].compactMap { $0 }.filter { !$0.isDeleted }
            if !remaining.isEmpty {
                errors.append(validationError(
                    NSValidationRelationshipDeniedDeleteError, key: relationship.name, value: nil,
                    "\(entity.name ?? "object") can't be deleted while its relationship '\(relationship.name)' (deny rule) still holds \(remaining.count) object\(remaining.count == 1 ? "" : "s")"))
            }
        }
        try throwCombined(errors)
    }

    func modelValidation(value: Any?, forKey key: String) throws {
        guard let property = entity.propertiesByName[key] else { return }
        try throwCombined(errors(for: property, value: value))
    }

    func modelValidationForInsertOrUpdate() throws { try throwCombined(validationErrors()) }

    func validationErrors() -> [NSError] {
        // Fetched properties are computed, never saved: nothing to validate (and reading one would fetch).
        var result: [NSError] = []
        let slots = entity.validatedSlots
        let traits = entity.layoutTraits
        for (position, property) in entity.validatedProperties.enumerated() {
            let slot = slots[position]
            if slot >= 0, !traits[slot].needsFullValidation, let type = traits[slot].attributeType {
                // A plain attribute: its store value (kept for the save) settles both checks;
                // anything else takes the full path below, which words the error. One kept as
                // its store value alone converted at its set and is not null: nothing to check.
                if attributeValues.holdsStoreValueOnly(slot) { continue }
                switch attributeValues.storeValue(at: slot, type: type) {
                case .some(.null): if traits[slot].isOptional { continue }
                case .some: continue
                case .none: break
                }
            }
            // Attributes by slot: no name hashed, no dynamic cast to find the kind.
            let value = slot >= 0 && traits[slot].attributeType != nil ? attributeValues[slot: slot] : currentValue(of: property)
            let errors = errors(for: property, value: value)
            if !errors.isEmpty { result += errors }
        }
        return result
    }

    private func errors(for property: NSPropertyDescription, value: Any?) -> [NSError] {
        let entityName = entity.name ?? "object"
        switch property {
        case let attribute as NSAttributeDescription:
            let checksType = !attribute.isTransient && attribute.attributeType != .transformableAttributeType
            // A value that converts to the attribute's stored type is not NSNull, so the cast to
            // NSNull (which bridges a Swift value first, the costliest step here) is skipped.
            let converts = checksType && value.map { StoreValue(attributeValue: $0, type: attribute.attributeType) != nil } ?? false
            guard let value, converts || !(value is NSNull) else {
                return attribute.isOptional ? [] : [validationError(
                    NSValidationMissingMandatoryPropertyError, key: attribute.name, value: nil,
                    "'\(attribute.name)' of \(entityName) is a required value")]
            }
            if checksType, !converts {
                return [validationError(
                    NSManagedObjectValidationError, key: attribute.name, value: value,
                    "'\(attribute.name)' of \(entityName) must be \(attribute.attributeType.xcodeName), not \(type(of: value))")]
            }
            let rules = attribute.validationRules
            let ruleErrors = rules.isEmpty ? [] : rules.compactMap { rule in check(rule, attribute: attribute, value: value) }
            return attribute.customValidationPredicates.isEmpty ? ruleErrors : ruleErrors + customPredicateErrors(attribute, value: value)
        case let relationship as NSRelationshipDescription:
            if relationship.isToMany {
                let count = Self.objects(in: value, key: relationship.name).filter { !$0.isDeleted }.count
                if count == 0 && !relationship.isOptional {
                    return [validationError(
                        NSValidationMissingMandatoryPropertyError, key: relationship.name, value: nil,
                        "'\(relationship.name)' of \(entityName) is a required relationship and is empty")]
                }
                if count > 0 || !relationship.isOptional {
                    if count < relationship.minCount {
                        return [validationError(
                            NSValidationRelationshipLacksMinimumCountError, key: relationship.name, value: value,
                            "'\(relationship.name)' of \(entityName) has \(count) objects; it needs at least \(relationship.minCount)")]
                    }
                }
                if relationship.maxCount > 0 && count > relationship.maxCount {
                    return [validationError(
                        NSValidationRelationshipExceedsMaximumCountError, key: relationship.name, value: value,
                        "'\(relationship.name)' of \(entityName) has \(count) objects; it allows at most \(relationship.maxCount)")]
                }
                return []
            }
            let destination = value as? NSManagedObject
            if (destination == nil || destination?.isDeleted == true) && !relationship.isOptional {
                return [validationError(
                    NSValidationMissingMandatoryPropertyError, key: relationship.name, value: nil,
                    "'\(relationship.name)' of \(entityName) is a required relationship and is nil")]
            }
            return []
        default:
            return []
        }
    }

    /// Predicates set with `setValidationPredicates(_:withValidationWarnings:)` or read from a
    /// compiled model: each failing one reports its warning, a message (with Apple's
    /// `NSManagedObjectValidationError`) or an error code (`momc` writes codes such as
    /// `NSValidationStringTooShortError` for the editor's rules).
    private func customPredicateErrors(_ property: NSPropertyDescription, value: Any) -> [NSError] {
        let predicates = property.customValidationPredicates
        let warnings = property.customValidationWarnings
        return zip(predicates, Array(warnings) + Array(repeating: "", count: max(0, predicates.count - warnings.count))).compactMap { predicate, warning in
            guard !predicate.evaluate(with: value) else { return nil }
            let message = (warning as? String).flatMap { $0.isEmpty ? nil : $0 } ?? "'\(property.name)' of \(entity.name ?? "object") does not satisfy \(predicate.predicateFormat)"
            let code = (warning as? Int).flatMap { $0 > 0 ? $0 : nil } ?? NSManagedObjectValidationError
            var error = validationError(code, key: property.name, value: value, message)
            var info = error.userInfo
            info[NSValidationPredicateErrorKey] = predicate
            error = NSError(domain: error.domain, code: error.code, userInfo: info)
            return error
        }
    }

    private func check(_ rule: AttributeValidationRule, attribute: NSAttributeDescription, value: Any) -> NSError? {
        let key = attribute.name
        let entityName = entity.name ?? "object"
        func number(_ value: Any) -> Decimal? {
            switch StoreValue(attributeValue: value, type: .decimalAttributeType) {
            case .decimal(let d): return d
            default: return nil
            }
        }
        func length(_ value: Any) -> Int? {
            if let string = value as? String { return string.count }
            if let data = value as? Data { return data.count }
            return nil
        }
        switch rule {
        case .minimumValue(let minimum):
            guard let n = number(value), n < minimum else { return nil }
            return validationError(NSValidationNumberTooSmallError, key: key, value: value, "'\(key)' of \(entityName) is \(n); the minimum is \(minimum)")
        case .maximumValue(let maximum):
            guard let n = number(value), n > maximum else { return nil }
            return validationError(NSValidationNumberTooLargeError, key: key, value: value, "'\(key)' of \(entityName) is \(n); the maximum is \(maximum)")
        case .minimumLength(let minimum):
            guard let n = length(value), n < minimum else { return nil }
            return validationError(NSValidationStringTooShortError, key: key, value: value, "'\(key)' of \(entityName) is \(n) long; the minimum length is \(minimum)")
        case .maximumLength(let maximum):
            guard let n = length(value), n > maximum else { return nil }
            return validationError(NSValidationStringTooLongError, key: key, value: value, "'\(key)' of \(entityName) is \(n) long; the maximum length is \(maximum)")
        case .earliestDate(let earliest):
            guard let date = value as? Date, date < earliest else { return nil }
            return validationError(NSValidationDateTooSoonError, key: key, value: value, "'\(key)' of \(entityName) is \(date); the earliest allowed is \(earliest)")
        case .latestDate(let latest):
            guard let date = value as? Date, date > latest else { return nil }
            return validationError(NSValidationDateTooLateError, key: key, value: value, "'\(key)' of \(entityName) is \(date); the latest allowed is \(latest)")
        case .regularExpression(let pattern):
            guard let string = value as? String else { return nil }
            // The loader checked the pattern compiles; a pattern set in code that does not is reported as a mismatch.
            let regex = try? NSRegularExpression(pattern: "^(?:\(pattern))$")
            let range = NSRange(string.startIndex..., in: string)
            if regex?.firstMatch(in: string, range: range) != nil { return nil }
            return validationError(NSValidationStringPatternMatchingError, key: key, value: value, "'\(key)' of \(entityName) (\"\(string)\") does not match the pattern \(pattern)")
        }
    }

    func validationError(_ code: Int, key: String, value: Any?, _ description: String) -> NSError {
        var info: [String: Any] = [NSValidationObjectErrorKey: self, NSValidationKeyErrorKey: key]
        if let value { info[NSValidationValueErrorKey] = value }
        return coreDataError(code, description, info)
    }

    func throwCombined(_ errors: [NSError]) throws {
        if errors.count == 1, let only = errors.first { throw only }
        if errors.count > 1 { throw combinedValidationError(errors) }
    }
}

/// One error for several validation failures, as Apple reports them.
func combinedValidationError(_ errors: [NSError]) -> NSError {
    coreDataError(
        NSValidationMultipleErrorsError,
        "Multiple validation errors occurred: " + errors.map(\.localizedDescription).joined(separator: "; "),
        [NSDetailedErrorsKey: errors])
}
