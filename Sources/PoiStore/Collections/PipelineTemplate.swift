// The update pipeline a bulk upsert (BulkUpsert.swift) sends for each item.
import CMongoC
import Foundation

/// Builds the per-item update pipeline:
///
///     [{ $replaceWith: { $mergeObjects: [ "$$ROOT", { $literal: <fields> },
///        { <key>: { $literal: <key value> }, <hash>: <digest>,
///          created_at: { $ifNull: ["$created_at", { $literal: now }] },
///          updated_at: { $cond: [ { $eq: ["$<hash>", <digest>] }, "$updated_at", { $literal: now } ] } } ] } }]
///
/// followed by `{ $unset: [...] }` when the item lists fields to remove.
/// `$mergeObjects` over `$$ROOT` keeps fields the caller does not own (thumbnailId, the app's).
struct PipelineTemplate {
    let options: UpsertOptions
    let now: BSONDate
    let hashPath: String
    let updatedPath: String
    let createdPath: String
    /// Bytes the pipeline adds around the fields (generous; for size checks).
    let overhead = 512

    init(options: UpsertOptions, now: BSONDate) {
        self.options = options
        self.now = now
        hashPath = "$" + options.hashField
        updatedPath = "$" + options.updatedField
        createdPath = "$" + options.createdField
    }

    /// The document a pipeline upsert would create for a new key, in the same field order
    /// (`_id`, key, fields, digest, `created_at`, `updated_at`), for a plain insert.
    func newDocument(id: ObjectId, key: BSONValue, fields: BSONDocument, digest: String,
                     builder b: inout BSONDocumentBuilder) -> BSONDocument {
        b.append("_id", objectId: id)
        // The pipeline's `$mergeObjects` over `{_id, key}` keeps the key second even when the
        // fields set it again (places do, first): the same order here, the key written once.
        var elements = fields.makeIterator()
        if elements.next()?.0 == options.keyField {
            b.appendElements(of: fields)
        } else {
            b.append(options.keyField, key)
            if fields[options.keyField] == nil {
                b.appendElements(of: fields)
            } else {
                for (k, v) in fields where k != options.keyField { b.append(k, v) }
            }
        }
        b.append(options.hashField, string: digest)
        b.append(options.createdField, date: now)
        b.append(options.updatedField, date: now)
        return b.finish()
    }

    func pipeline(key: BSONValue, fields: BSONDocument, unset: [String], digest: String) -> BSONDocument {
        var b = BSONDocumentBuilder(reservingCapacity: fields.bytes.count + 320)
        b.openDocument("0")
        b.openDocument("$replaceWith")
        b.openArray("$mergeObjects")
        b.append("0", string: "$$ROOT")
        b.openDocument("1")
        b.append("$literal", document: fields)
        b.close()
        b.openDocument("2")
        b.openDocument(options.keyField); b.append("$literal", key); b.close()
        b.append(options.hashField, string: digest)
        b.openDocument(options.createdField)
        b.openArray("$ifNull")
        b.append("0", string: createdPath)
        b.openDocument("1"); b.append("$literal", date: now); b.close()
        b.close()
        b.close()
        b.openDocument(options.updatedField)
        b.openArray("$cond")
        b.openDocument("0")
        b.openArray("$eq")
        b.append("0", string: hashPath)
        b.append("1", string: digest)
        b.close()
        b.close()
        b.append("1", string: updatedPath)
        b.openDocument("2"); b.append("$literal", date: now); b.close()
        b.close(); b.close(); b.close(); b.close(); b.close(); b.close()  // $cond, updated, 2, $mergeObjects, $replaceWith, 0
        if !unset.isEmpty {
            b.openDocument("1")
            b.append("$unset", strings: unset)
            b.close()
        }
        return b.finish()
    }
}
