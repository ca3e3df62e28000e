/* A fork-join parallel loop for the CPU backends: threads are created per call (cheap next to the work the
 * CPU ops do), chunks are claimed dynamically so uneven work (causal attention) balances. */
#include "internal.h"

#include <stdlib.h>
#include <unistd.h>

#define HK_MAX_THREADS 64

typedef struct loop {
    int64_t count, grain;
    int64_t next; /* next unclaimed index, advanced atomically */
    void (*body)(int64_t, int64_t, void *);
    void *user;
} loop;

static void *worker(void *arg)
{
    loop *l = arg;
    for (;;) {
        int64_t begin = __atomic_fetch_add(&l->next, l->grain, __ATOMIC_RELAXED);
        if (begin >= l->count)
            return NULL;
        int64_t end = begin + l->grain < l->count ? begin + l->grain : l->count;
        l->body(begin, end, l->user);
    }
}

static int thread_count(void)
{
    const char *env = getenv("HK_NUM_THREADS");
    long n = env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    return n > HK_MAX_THREADS ? HK_MAX_THREADS : (int)n;
}

void hk_parallel_for(int64_t count, int64_t grain, void (*body)(int64_t, int64_t, void *), void *user)
{
    if (count <= 0)
        return;
    if (grain < 1)
        grain = 1;
    int64_t chunks = (count + grain - 1) / grain;
    int threads = thread_count();
    if (threads > chunks)
        threads = (int)chunks;
    loop l = {count, grain, 0, body, user};
    pthread_t tid[HK_MAX_THREADS];
    int started = 0;
    for (int i = 1; i < threads; ++i) {
        if (pthread_create(&tid[started], NULL, worker, &l) != 0)
            break; /* the calling thread finishes the rest */
        ++started;
    }
    worker(&l);
    for (int i = 0; i < started; ++i)
        pthread_join(tid[i], NULL);
}
