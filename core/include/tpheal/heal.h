#ifndef TPHEAL_HEAL_H
#define TPHEAL_HEAL_H
#include <tpheal/error.h>

/* Read-only view of the self-heal registry, for diagnostics and tests.
 * In a build without TPHEAL_SELF_HEAL these report an empty registry. */
typedef struct tph_heal_entry_info {
    uintptr_t key;            /* pool key: raw handle, 0 = default pool */
    uint64_t objects;         /* live tpheal objects on the pool */
    uint64_t last_cancelled;  /* stamps, interrupt-time 100 ns units */
    uint64_t last_started;
    uint64_t last_submitted;
    uint32_t outstanding;     /* repairs submitted and not yet started */
    uint32_t overdue_episodes;
    uint64_t repairs_run;     /* dispatches of this entry's own repair work */
    bool unhealed;
} tph_heal_entry_info;

bool tph_heal_entry_get(uintptr_t key, tph_heal_entry_info *out);
size_t tph_heal_entry_count(void);
/* Copies up to max entries, in registration order; returns the total. */
size_t tph_heal_entries(tph_heal_entry_info *out, size_t max);
bool tph_heal_healer_running(void);
/* One healer pass, exactly what the healer's timer runs: repair what is
 * owed, then retire idle entries. */
void tph_heal_tick(void);
void tph_heal_retire_idle(void);

#endif
